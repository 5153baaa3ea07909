import { GatewayError, type ToolCall } from '@gw/shared';
import type { McpClientInfo, McpRunnerService, ToolMessage } from './mcp-runner-service.ts';

/**
 * The MCP runner core: owns MCP client connections and runs tool calls. The same code runs inside BullMQ
 * workers (cluster) and in the embedded process. With no MCP client configured every execution is a 400.
 */
export class McpRunnerCore implements McpRunnerService {
  async executeTool(call: ToolCall): Promise<ToolMessage> {
    throw new GatewayError({
      type: 'mcp_not_configured',
      status: 400,
      message: `MCP is not configured: no client offers the tool '${call.function.name}'`,
    });
  }

  async listClients(): Promise<McpClientInfo[]> {
    return [];
  }

  async close(): Promise<void> {}
}
