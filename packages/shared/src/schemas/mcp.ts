import { z } from 'zod';
import { destination, restartOnly } from '../config/declared-fields.ts';

const MCP_CONNECTION_TYPES = ['stdio', 'http', 'sse'] as const;
export const MCP_CLIENT_STATES = ['connecting', 'connected', 'disconnected', 'error'] as const;
export type McpClientState = (typeof MCP_CLIENT_STATES)[number];

export const mcpClientConfigSchema = z
  .strictObject({
    name: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'must be 1-64 letters, digits, "-" or "_"'),
    connection_type: z.enum(MCP_CONNECTION_TYPES),
    connection_string: destination(z.url()).optional(),
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
    /**
     * Add this client's tools to every chat request (each tool costs prompt tokens). Off by default: then its
     * tools are added only when the request names them (`x-gw-mcp-include-tools`) or its key's MCP policy does.
     */
    inject_into_chat: z.boolean().default(false),
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

/**
 * The filter edits `PUT|PATCH /api/mcp/client/{name}` accepts; `null` removes a list. Connection fields change by
 * delete and add.
 */
export const mcpClientEditSchema = z.strictObject({
  name: z.string().optional(),
  tools_to_execute: z.array(z.string()).nullable().optional(),
  tools_to_skip: z.array(z.string()).nullable().optional(),
  tools_to_auto_execute: z.array(z.string()).nullable().optional(),
  allow_by_default: z.boolean().optional(),
});

/** How tool calls are run: the `mcp` section without its clients (docs/mcp.md); `PUT /api/config` changes it. */
export const mcpRuntimeSettingsSchema = z.strictObject({
  tool_timeout_ms: restartOnly(
    z.number().int().positive().meta({
      description:
        'Most time one tool call may take on a runner; past it the call answers 504 upstream_timeout.',
      unit: 'ms',
    }),
  ).default(30_000),
  queue_timeout_ms: z
    .number()
    .int()
    .positive()
    .meta({
      description:
        'Most time a call may wait for a runner (queued, retried or taken over after a runner died).',
      unit: 'ms',
    })
    .default(30_000),
  max_queued: restartOnly(
    z.number().int().positive().meta({
      description: 'Waiting calls past which a new one is refused with 429 queue_full.',
      unit: 'calls',
    }),
  ).default(1000),
  worker_concurrency: restartOnly(
    z.number().int().positive().max(1000).meta({
      description:
        'Calls one runner runs at once (all clients); GW_MCP_CONCURRENCY overrides it on a runner.',
      unit: 'calls',
    }),
  ).default(8),
  max_concurrency_per_client: restartOnly(
    z.number().int().positive().max(1000).meta({
      description: 'Calls one runner sends to one client at once; more wait on the runner.',
      unit: 'calls',
    }),
  ).default(10),
  connect_timeout_ms: restartOnly(
    z.number().int().positive().meta({
      description: 'Most time a connection attempt (spawn or HTTP handshake, then the tool list) may take.',
      unit: 'ms',
    }),
  ).default(15_000),
  agent_max_depth: z
    .number()
    .int()
    .min(0)
    .max(50)
    .meta({
      description: 'Rounds of automatic tool execution inside one chat request (agent loop).',
      unit: 'rounds',
    })
    .default(5),
});

/** The config file's `mcp` section: clients to seed, and how tool calls are run (docs/mcp.md). */
export const mcpSettingsSchema = mcpRuntimeSettingsSchema
  .extend({ clients: z.array(mcpClientConfigSchema).default([]) })
  .superRefine((settings, context) => {
    const seen = new Set<string>();
    for (const [index, client] of settings.clients.entries()) {
      if (seen.has(client.name)) {
        context.addIssue({
          code: 'custom',
          path: ['clients', index, 'name'],
          message: `'${client.name}' is used twice`,
        });
      }
      seen.add(client.name);
    }
  });

export type McpSettings = z.infer<typeof mcpSettingsSchema>;
