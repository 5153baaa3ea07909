import type { IncomingHttpHeaders } from 'node:http';
import type { AuthorizeResult } from '@gw/governance';
import type { CatalogTool, ToolMessage } from '@gw/mcp-runner/control';
import type { ToolCall } from '@gw/shared';
import type { IngressGuardrails } from './guardrail-stage.ts';
import { parseArguments } from './mcp-tools.ts';

interface ToolRun {
  message: ToolMessage;
  isError: boolean;
}

/**
 * An MCP tool call under guardrails (`/v1/mcp/tool/execute`): the conditions see the client, the tool and its
 * arguments; the arguments (their JSON text) are the input, checked before the tool runs; the tool's answer
 * is the output, checked before it is returned. A change answers 246 with `extra_fields.guardrails`.
 */
export async function guardedToolCall(
  guardrails: IngressGuardrails | undefined,
  options: {
    call: ToolCall;
    tool: CatalogTool;
    requestId: string;
    headers: IncomingHttpHeaders;
    authorization: AuthorizeResult;
    run(call: ToolCall): Promise<ToolRun>;
  },
): Promise<ToolRun & { message: ToolMessage & { extra_fields?: unknown }; status: 200 | 246 }> {
  const { call } = options;
  const session = guardrails?.open({
    requestId: options.requestId,
    headers: options.headers,
    authorization: options.authorization,
    signal: new AbortController().signal,
    request_type: 'tool',
    tool: {
      client: options.tool.client,
      tool: options.tool.tool,
      arguments: parseArguments(call.function.arguments),
    },
  });
  if (!session) return { ...(await options.run(call)), status: 200 };
  let checked = call;
  if (session.checks('input')) {
    const [text = ''] = await session.input({
      texts: [call.function.arguments],
      locations: ['function.arguments'],
    });
    if (text !== call.function.arguments)
      checked = { ...call, function: { ...call.function, arguments: text } };
  }
  const result = await options.run(checked);
  let content = result.message.content;
  if (session.checks('output')) {
    [content = ''] = await session.output({ texts: [content], locations: ['content'] });
  }
  if (session.restores) content = session.restore(content);
  const outcome = session.outcome();
  return {
    isError: result.isError,
    message: { ...result.message, content, extra_fields: { guardrails: outcome } },
    status: outcome.outcome === 'warning' ? 246 : 200,
  };
}
