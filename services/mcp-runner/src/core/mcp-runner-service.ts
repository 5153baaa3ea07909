import type { McpClientState, ToolCall } from '@gw/shared';

/** The answer of a tool execution (SPEC.md "Tool message"). */
export interface ToolMessage {
  role: 'tool';
  content: string;
  tool_call_id: string;
}

export interface McpClientInfo {
  name: string;
  tools: string[];
  state: McpClientState;
}

/** The MCP runner's interface: the in-process core and the BullMQ queue client implement it alike. */
export interface McpRunnerService {
  executeTool(call: ToolCall): Promise<ToolMessage>;
  listClients(): Promise<McpClientInfo[]>;
}
