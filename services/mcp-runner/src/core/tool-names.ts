/**
 * Tool names seen by models and callers are always `<client>-<tool>` (docs/mcp.md "Tool names"): unique across
 * clients by construction, and stable (adding a client never renames another client's tools). Characters
 * outside OpenAI's function-name alphabet `[A-Za-z0-9_-]` become `_`.
 *
 * Client configs (`tools_to_execute`, `tools_to_skip`, `tools_to_auto_execute`) and virtual key policies
 * (`mcp_tools[].tools`) name a client's tools by the server's own names, without the prefix.
 */
export function gatewayToolName(client: string, tool: string): string {
  return `${client}-${tool}`.replace(/[^A-Za-z0-9_-]/g, '_');
}

/** Providers refuse longer function names: such tools run through /v1/mcp/tool/execute but are not injected. */
export const MAX_INJECTED_NAME_LENGTH = 64;
