import {
  availableTools,
  type CatalogTool,
  MAX_INJECTED_NAME_LENGTH,
  type McpClientView,
  type ToolAccess,
} from '@gw/mcp-runner/control';
import type { ChatRoute, CompletionResult } from '@gw/router';
import {
  type ChatChoice,
  GatewayError,
  type Message,
  type TextChoice,
  type ToolCall,
  type Usage,
} from '@gw/shared';
import { accessOf, type McpIngress, runToolCall } from './mcp-tools.ts';
import { type CompletionExchange, type Stage, translatedRoute } from './stage.ts';

/** An OpenAI-style function tool, as chat requests carry them in `tools`. */
interface FunctionTool {
  type: 'function';
  function: { name: string; description?: string; parameters: Record<string, unknown> };
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

function isChatChoice(choice: ChatChoice | TextChoice): choice is ChatChoice {
  return 'message' in choice && typeof choice.message === 'object' && choice.message !== null;
}

function addUsage(total: Usage, usage: Usage): Usage {
  return {
    prompt_tokens: total.prompt_tokens + usage.prompt_tokens,
    completion_tokens: total.completion_tokens + usage.completion_tokens,
    total_tokens: total.total_tokens + usage.total_tokens,
  };
}

/**
 * Which clients' tools a chat request gets: those marked `inject_into_chat`, and any the request asks for
 * (`x-gw-mcp-include-tools`) or its key's MCP policy names. Every injected tool costs prompt tokens on every
 * request, so nothing is added that nobody asked for.
 */
function injectedClients(clients: McpClientView[], access: ToolAccess): (client: string) => boolean {
  if (access.include !== undefined) return () => true;
  const named = new Set([
    ...clients.filter((client) => client.config.inject_into_chat).map((client) => client.name),
    ...(access.keyPolicy ?? []).map((policy) => policy.client),
  ]);
  return (client) => named.has(client);
}

/**
 * MCP in chat requests (docs/mcp.md "Tools in chat requests"), as a stage of the native chat paths:
 *
 * - prepare: the tools this request may use (after the three filtering levels, the key's policy read from
 *   the request's one authorization) are appended to the request's `tools`; a caller's tool of the same
 *   name is kept and the MCP one left out;
 * - agent loop (non-streaming chat only): when every tool call of the answer names a tool its client marks
 *   `tools_to_auto_execute`, the gateway runs them, appends the assistant message and the tool messages, and
 *   asks the model again (the rest of the pipeline), up to `agent_max_depth` rounds; the final answer
 *   carries the usage of all rounds. Answers with any other tool call go back to the caller unchanged.
 *   Streaming requests get the tools but no loop: their tool calls always go back to the caller.
 */
export function mcpStage(mcp: McpIngress): Stage {
  /** Adds the MCP tools to a chat request; the tools by name, undefined when it gets none. */
  function inject(exchange: CompletionExchange): Map<string, CatalogTool> | undefined {
    const { route } = exchange;
    if (route.operation !== 'chat' || mcp.catalog.snapshot().clients.length === 0) return undefined;
    const access = accessOf(exchange.authorization, exchange.headers);
    const callerTools = route.params['tools'];
    const existing = callerToolNames(callerTools);
    const snapshot = mcp.catalog.snapshot();
    const wanted = injectedClients(snapshot.clients, access);
    const tools = availableTools(snapshot, access).filter(
      (tool) =>
        wanted(tool.client) && !existing.has(tool.name) && tool.name.length <= MAX_INJECTED_NAME_LENGTH,
    );
    if (tools.length === 0) return undefined;
    const injected = [...(Array.isArray(callerTools) ? callerTools : []), ...tools.map(asFunctionTool)];
    // The injected tools are in the translation only, so the provider gets the translation.
    exchange.route = { ...translatedRoute(route), params: { ...route.params, tools: injected } };
    return new Map(tools.map((tool) => [tool.name, tool]));
  }

  async function runAll(
    calls: ToolCall[],
    tools: Map<string, CatalogTool>,
    exchange: CompletionExchange,
  ): Promise<Message[]> {
    return Promise.all(
      calls.map(async (toolCall): Promise<Message> => {
        const tool = tools.get(toolCall.function.name);
        try {
          if (!tool) throw new GatewayError({ type: 'mcp_tool_not_found', message: 'unknown tool' });
          const { message } = await runToolCall(mcp, {
            call: toolCall,
            tool,
            requestId: exchange.requestId,
            trace: exchange.span?.context,
          });
          return { ...message };
        } catch (error) {
          // The model gets the failure as the tool's answer and may recover; the request goes on.
          const failure =
            error instanceof GatewayError
              ? { type: error.type, message: error.message }
              : { type: 'internal_error', message: 'the tool call failed' };
          return { role: 'tool', content: JSON.stringify({ error: failure }), tool_call_id: toolCall.id };
        }
      }),
    );
  }

  return {
    name: 'mcp',

    async complete(exchange, next): Promise<CompletionResult> {
      const tools = inject(exchange);
      if (!tools) return next();
      const injected = [...tools.keys()];
      let usage: Usage = { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 };
      let executed = 0;
      for (let round = 0; ; round++) {
        const result = await next();
        usage = addUsage(usage, result.response.usage);
        const { response } = result;
        const choice = response.choices.length === 1 ? response.choices[0] : undefined;
        const message = choice && isChatChoice(choice) ? choice.message : undefined;
        const calls = message?.tool_calls ?? [];
        const automatic =
          calls.length > 0 && calls.every((toolCall) => tools.get(toolCall.function.name)?.autoExecute);
        if (!automatic || round >= mcp.settings.current().agent_max_depth) {
          const extra_fields = { ...response.extra_fields, mcp_injected_tools: injected };
          const { provider, servedBy } = result;
          if (round === 0) return { provider, servedBy, response: { ...response, extra_fields } };
          return {
            provider,
            servedBy,
            response: {
              ...response,
              usage: { ...response.usage, ...usage },
              extra_fields: { ...extra_fields, mcp_agent: { rounds: round, tool_calls: executed } },
            },
          };
        }
        const results = await runAll(calls, tools, exchange);
        executed += calls.length;
        const assistant: Message = {
          role: 'assistant',
          content: message?.content ?? null,
          tool_calls: calls,
        };
        const route = exchange.route as ChatRoute;
        exchange.route = { ...route, messages: [...route.messages, assistant, ...results] };
      }
    },

    async stream(exchange, next) {
      inject(exchange);
      return next();
    },
  };
}
