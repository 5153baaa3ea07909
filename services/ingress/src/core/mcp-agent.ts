import { availableTools, type CatalogTool, MAX_INJECTED_NAME_LENGTH } from '@gw/mcp-runner/control';
import type { CompleteResult } from '@gw/router';
import { GatewayError, type Message, type ToolCall, type Usage } from '@gw/shared';
import type { CompletionPipeline, PipelineCall } from './completion-pipeline.ts';
import { type McpRouteDependencies, resolveAccess, runToolCall } from './mcp-tools.ts';

/** An OpenAI-style function tool, as chat requests carry them in `tools`. */
interface FunctionTool {
  type: 'function';
  function: { name: string; description?: string; parameters: Record<string, unknown> };
}

interface CompletionBody {
  choices?: Array<{ message?: { content?: unknown; tool_calls?: ToolCall[] }; finish_reason?: string }>;
  usage?: Usage;
  extra_fields?: Record<string, unknown>;
}

/** A tool definition for the model; `$schema` is dropped (several providers refuse unknown schema keys). */
function asFunctionTool(tool: CatalogTool): FunctionTool {
  const { $schema: _schema, ...schema } = tool.definition.inputSchema ?? {};
  return {
    type: 'function',
    function: {
      name: tool.name,
      ...(tool.definition.description ? { description: tool.definition.description } : {}),
      parameters: Object.keys(schema).length > 0 ? schema : { type: 'object', properties: {} },
    },
  };
}

function callerToolNames(tools: unknown): Set<string> {
  const names = new Set<string>();
  if (!Array.isArray(tools)) return names;
  for (const tool of tools as Array<{ function?: { name?: unknown } }>) {
    if (typeof tool?.function?.name === 'string') names.add(tool.function.name);
  }
  return names;
}

function addUsage(total: Usage, usage: Usage | undefined): Usage {
  if (!usage) return total;
  return {
    prompt_tokens: total.prompt_tokens + (usage.prompt_tokens ?? 0),
    completion_tokens: total.completion_tokens + (usage.completion_tokens ?? 0),
    total_tokens: total.total_tokens + (usage.total_tokens ?? 0),
  };
}

/**
 * MCP in chat requests (docs/mcp.md "Tools in chat requests"), as a wrapper of the completion pipeline:
 *
 * - injection: the tools this request may use (after the three filtering levels) are appended to the
 *   request's `tools`; a caller's tool of the same name is kept and the MCP one left out;
 * - agent loop (non-streaming chat only): when every tool call of the answer names a tool its client marks
 *   `tools_to_auto_execute`, the gateway runs them, appends the assistant message and the tool messages, and
 *   asks the model again, up to `agent_max_depth` rounds; the final answer carries the usage of all rounds.
 *   Answers with any other tool call go back to the caller unchanged. Streaming requests get the tools but
 *   no loop: their tool calls always go back to the caller.
 */
export function withMcpAgent(pipeline: CompletionPipeline, mcp: McpRouteDependencies): CompletionPipeline {
  /** The request with MCP tools added, and the tools by name; undefined when it gets none. */
  async function inject(call: PipelineCall) {
    if (call.parsed.operation !== 'chat' || mcp.catalog.snapshot().clients.length === 0) return undefined;
    const access = await resolveAccess(mcp, { requestId: call.requestId, headers: call.headers });
    const existing = callerToolNames(call.parsed.params['tools']);
    const tools = availableTools(mcp.catalog.snapshot(), access).filter(
      (tool) => !existing.has(tool.name) && tool.name.length <= MAX_INJECTED_NAME_LENGTH,
    );
    if (tools.length === 0) return undefined;
    const callerTools = Array.isArray(call.parsed.params['tools']) ? call.parsed.params['tools'] : [];
    const parsed = {
      ...call.parsed,
      params: { ...call.parsed.params, tools: [...callerTools, ...tools.map(asFunctionTool)] },
    };
    return { call: { ...call, parsed }, tools: new Map(tools.map((tool) => [tool.name, tool])) };
  }

  async function runAll(
    calls: ToolCall[],
    tools: Map<string, CatalogTool>,
    requestId: string,
  ): Promise<Message[]> {
    return Promise.all(
      calls.map(async (toolCall) => {
        try {
          const { message } = await runToolCall(mcp, {
            call: toolCall,
            tool: tools.get(toolCall.function.name)!,
            requestId,
          });
          return { ...message };
        } catch (error) {
          // The model gets the failure as the tool's answer and may recover; the request goes on.
          const failure =
            error instanceof GatewayError
              ? { type: error.type, message: error.message }
              : { type: 'internal_error', message: 'the tool call failed' };
          return {
            role: 'tool' as const,
            content: JSON.stringify({ error: failure }),
            tool_call_id: toolCall.id,
          };
        }
      }),
    );
  }

  return {
    ...pipeline,

    async complete(call: PipelineCall): Promise<CompleteResult> {
      const injected = await inject(call);
      if (!injected) return pipeline.complete(call);
      let current = injected.call;
      let usage: Usage = { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 };
      let executed = 0;
      for (let round = 0; ; round++) {
        const result = await pipeline.complete(current);
        usage = addUsage(usage, result.usage);
        const body = JSON.parse(result.body) as CompletionBody;
        const choice = body.choices?.length === 1 ? body.choices[0] : undefined;
        const calls = choice?.message?.tool_calls ?? [];
        const automatic =
          calls.length > 0 &&
          calls.every((toolCall) => injected.tools.get(toolCall.function.name)?.autoExecute);
        if (!automatic || round >= mcp.settings.agent_max_depth) {
          if (round === 0) return result;
          body.usage = { ...body.usage, ...usage };
          body.extra_fields = { ...body.extra_fields, mcp_agent: { rounds: round, tool_calls: executed } };
          return { ...result, usage, body: JSON.stringify(body) };
        }
        const results = await runAll(calls, injected.tools, call.requestId);
        executed += calls.length;
        const assistant: Message = {
          role: 'assistant',
          content: (choice?.message?.content as string | null) ?? null,
          tool_calls: calls,
        };
        current = {
          ...current,
          parsed: {
            ...current.parsed,
            messages: [...(current.parsed.messages ?? []), assistant, ...results],
          },
        };
      }
    },

    async stream(call: PipelineCall) {
      const injected = await inject(call);
      return pipeline.stream(injected?.call ?? call);
    },
  };
}
