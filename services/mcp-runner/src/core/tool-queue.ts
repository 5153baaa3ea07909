/** Name of the BullMQ queue that carries tool executions from ingress to runner workers. */
export const TOOL_QUEUE = 'gw-mcp-tools';
