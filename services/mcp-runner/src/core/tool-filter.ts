import { GatewayError, type McpClientConfig } from '@gw/shared';
import type { McpToolDefinition } from './mcp-records.ts';
import type { McpClientView } from './mcp-registry.ts';
import { gatewayToolName } from './tool-names.ts';

/** One tool of one client, under its gateway name. */
export interface CatalogTool {
  /** `<client>-<tool>`: what models and callers use. */
  name: string;
  client: string;
  /** The server's own name. */
  tool: string;
  definition: McpToolDefinition;
  /** Run by the gateway itself inside chat requests (the client's `tools_to_auto_execute`). */
  autoExecute: boolean;
}

/** Every client and every tool it offers, as last reported by the runners. */
export interface McpCatalogSnapshot {
  clients: McpClientView[];
  tools: Map<string, CatalogTool>;
}

export function buildSnapshot(clients: McpClientView[]): McpCatalogSnapshot {
  const tools = new Map<string, CatalogTool>();
  for (const client of clients) {
    const auto = new Set(client.config.tools_to_auto_execute ?? []);
    for (const definition of client.definitions) {
      const name = gatewayToolName(client.name, definition.name);
      // Two tools of one client that differ only in characters outside [A-Za-z0-9_-]: the first one wins.
      if (tools.has(name)) continue;
      tools.set(name, {
        name,
        client: client.name,
        tool: definition.name,
        definition,
        autoExecute: auto.has(definition.name),
      });
    }
  }
  return { clients, tools };
}

/** The three filtering levels (docs/mcp.md "Filtering"). */
export type FilterLevel = 'client_config' | 'virtual_key' | 'request_header';

/** What a request may use: the key's policy and the request header's entries. */
export interface ToolAccess {
  /**
   * The virtual key's `mcp_tools` (per client: tool names, `*`, or none); undefined when the request carries
   * no virtual key: then every client is available.
   */
  keyPolicy?: Array<{ client: string; tools: string[] }> | undefined;
  /** The name of the key, for messages. */
  keyName?: string | undefined;
  /** Entries of `x-gw-mcp-include-tools`; undefined when the header is absent. */
  include?: string[] | undefined;
}

/** Level 1: `tools_to_execute` (absent or `*`: all; `[]`: none) then `tools_to_skip`. */
export function allowedByClientConfig(config: McpClientConfig, tool: string): boolean {
  const allow = config.tools_to_execute;
  if (allow && !allow.includes('*') && !allow.includes(tool)) return false;
  return !(config.tools_to_skip ?? []).includes(tool);
}

/** Level 3: a key allows a client's tools through its own entry; without one, only allow-by-default clients. */
function allowedByKey(access: ToolAccess, config: McpClientConfig, tool: string): boolean {
  if (!access.keyPolicy) return true;
  const entry = access.keyPolicy.find((candidate) => candidate.client === config.name);
  if (!entry) return config.allow_by_default;
  return entry.tools.includes('*') || entry.tools.includes(tool);
}

/**
 * Level 2: header entries are gateway names (`<client>-<tool>`), `<client>-*` or `*`. They only narrow: an
 * entry the key does not allow grants nothing (it is dropped).
 */
function allowedByHeader(access: ToolAccess, tool: CatalogTool): boolean {
  if (!access.include) return true;
  return access.include.some(
    (entry) =>
      entry === '*' || entry === tool.name || (entry.endsWith('-*') && entry.slice(0, -2) === tool.client),
  );
}

/** The first level that refuses the tool, or undefined when the request may use it. */
function deniedBy(
  snapshot: McpCatalogSnapshot,
  tool: CatalogTool,
  access: ToolAccess,
): FilterLevel | undefined {
  const client = snapshot.clients.find((candidate) => candidate.name === tool.client);
  if (!client || !allowedByClientConfig(client.config, tool.tool)) return 'client_config';
  if (!allowedByKey(access, client.config, tool.tool)) return 'virtual_key';
  if (!allowedByHeader(access, tool)) return 'request_header';
  return undefined;
}

/** Every tool the request may use, in catalog order. */
export function availableTools(snapshot: McpCatalogSnapshot, access: ToolAccess): CatalogTool[] {
  return [...snapshot.tools.values()].filter((tool) => deniedBy(snapshot, tool, access) === undefined);
}

/** `x-gw-mcp-include-tools`: comma-separated entries; undefined when absent. */
export function parseIncludeHeader(value: string | string[] | undefined): string[] | undefined {
  if (value === undefined) return undefined;
  const text = Array.isArray(value) ? value.join(',') : value;
  return text
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean);
}

const LEVEL_TEXT: Record<FilterLevel, string> = {
  client_config: "the client's configuration (tools_to_execute / tools_to_skip)",
  virtual_key: "the virtual key's MCP policy",
  request_header: 'the x-gw-mcp-include-tools header',
};

/**
 * The tool a call names, checked against every level: 400 `mcp_not_configured` without clients, 400
 * `mcp_tool_not_found` for a name no client offers, 503 when its client has no connection on any runner,
 * 403 `mcp_tool_not_allowed` when a level refuses it. A bare server name is accepted when exactly one
 * client the request may use offers it.
 */
export function resolveToolCall(snapshot: McpCatalogSnapshot, name: string, access: ToolAccess): CatalogTool {
  if (snapshot.clients.length === 0) {
    throw new GatewayError({
      type: 'mcp_not_configured',
      message: 'MCP is not configured: add an MCP client (POST /api/mcp/client or mcp.clients in the config)',
    });
  }
  let tool = snapshot.tools.get(name);
  if (!tool) {
    const bare = [...snapshot.tools.values()].filter((candidate) => candidate.tool === name);
    const usable = bare.filter((candidate) => deniedBy(snapshot, candidate, access) === undefined);
    if (usable.length === 1) return usable[0]!;
    if (usable.length > 1) {
      throw new GatewayError({
        type: 'mcp_tool_not_found',
        message: `tool '${name}' is offered by several MCP clients: use one of ${usable.map((candidate) => `'${candidate.name}'`).join(', ')}`,
        param: 'function.name',
      });
    }
    tool = bare[0];
  }
  if (!tool) {
    const owner = snapshot.clients.find(
      (client) => name.startsWith(`${client.name}-`) && client.state !== 'connected',
    );
    if (owner) {
      throw new GatewayError({
        type: 'service_unavailable',
        message: `MCP client '${owner.name}' is ${owner.state}${owner.error ? ` (${owner.error})` : ''}; its tools are not known`,
        retryAfter: 1,
      });
    }
    throw new GatewayError({
      type: 'mcp_tool_not_found',
      message: `no MCP client offers a tool named '${name}' (tools are named '<client>-<tool>')`,
      param: 'function.name',
    });
  }
  const level = deniedBy(snapshot, tool, access);
  if (level) {
    throw new GatewayError({
      type: 'mcp_tool_not_allowed',
      message: `tool '${tool.name}' is not allowed by ${LEVEL_TEXT[level]}${level === 'virtual_key' && access.keyName ? ` of '${access.keyName}'` : ''}`,
      param: 'function.name',
    });
  }
  return tool;
}
