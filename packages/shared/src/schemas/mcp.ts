import { z } from 'zod';

export const MCP_CONNECTION_TYPES = ['stdio', 'http', 'sse'] as const;
export const MCP_CLIENT_STATES = ['connecting', 'connected', 'disconnected', 'error'] as const;
export type McpClientState = (typeof MCP_CLIENT_STATES)[number];

export const mcpClientConfigSchema = z
  .strictObject({
    name: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'must be 1-64 letters, digits, "-" or "_"'),
    connection_type: z.enum(MCP_CONNECTION_TYPES),
    connection_string: z.url().optional(),
    stdio_config: z
      .strictObject({
        command: z.string().min(1),
        args: z.array(z.string()).default([]),
        envs: z.array(z.string()).default([]),
      })
      .optional(),
    tools_to_execute: z.array(z.string()).optional(),
    tools_to_skip: z.array(z.string()).optional(),
    /** Tools run by the gateway itself inside a chat request (agent loop). */
    tools_to_auto_execute: z.array(z.string()).optional(),
    /** Available to every virtual key without a per-key policy. */
    allow_by_default: z.boolean().default(false),
  })
  .superRefine((config, context) => {
    if (config.connection_type === 'stdio' && !config.stdio_config) {
      context.addIssue({ code: 'custom', path: ['stdio_config'], message: 'is required for stdio clients' });
    }
    if (config.connection_type !== 'stdio' && !config.connection_string) {
      context.addIssue({
        code: 'custom',
        path: ['connection_string'],
        message: `is required for ${config.connection_type} clients`,
      });
    }
  });

export type McpClientConfig = z.infer<typeof mcpClientConfigSchema>;
