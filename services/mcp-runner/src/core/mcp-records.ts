import { MCP_CLIENT_STATES } from '@gw/shared';
import { z } from 'zod';

/**
 * What MCP keeps in the store (docs/mcp.md "Where state lives"):
 * - `mcp-clients`: one MCPClientConfig per client, by name (written by admin and by config seeding);
 * - `mcp-client-status`: one status document per client and runner (`<client>/<runner>`), written only by the
 *   runner that holds that connection: its state, its error and the tools it discovered;
 * - the channel `mcp-changed` tells every runner, ingress and admin that something changed.
 */
export const MCP_CLIENTS_COLLECTION = 'mcp-clients';
export const MCP_STATUS_COLLECTION = 'mcp-client-status';
export const MCP_CHANNEL = 'mcp-changed';

/** `config`: a client was added, edited or removed; `status`: a runner reported; `reconnect`: admin asked. */
export const mcpChangeSchema = z.object({
  kind: z.enum(['config', 'status', 'reconnect']),
  name: z.string(),
});
export type McpChange = z.infer<typeof mcpChangeSchema>;

/** A tool as the MCP server described it (`tools/list`). */
export const mcpToolDefinitionSchema = z.looseObject({
  name: z.string().min(1),
  description: z.string().optional(),
  inputSchema: z.record(z.string(), z.unknown()).optional(),
});
export type McpToolDefinition = z.infer<typeof mcpToolDefinitionSchema>;

export const mcpStatusSchema = z.object({
  client: z.string(),
  runner: z.string(),
  pid: z.number().int().optional(),
  state: z.enum(MCP_CLIENT_STATES),
  error: z.string().optional(),
  tools: z.array(mcpToolDefinitionSchema),
  /** Epoch ms of the report. */
  updated_at: z.number(),
  /** Epoch ms after which readers ignore the report (its runner stopped heart-beating: it died). */
  expires_at: z.number(),
});
export type McpStatus = z.infer<typeof mcpStatusSchema>;

export function statusId(client: string, runner: string): string {
  return `${client}/${runner}`;
}
