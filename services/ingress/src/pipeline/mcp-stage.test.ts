// The agent loop inside the real pipeline, with a scripted router, a counting governance and a stand-in tool
// executor: one authorization per request, depth limit, mixed tool calls, a failing tool, usage of all rounds
// settled once, streaming (injection only), text completions.
import type { Admission, AuthorizeRequest, SettleRequest } from '@gw/governance';
import { aggregateView, buildSnapshot, type McpCatalog, type ToolJob } from '@gw/mcp-runner/control';
import type { CompletionResult, CompletionRoute, RouterService } from '@gw/router';
import { createLogger, fixed, GatewayError, mcpClientConfigSchema } from '@gw/shared';
import { describe, expect, it } from 'vitest';
import { mcpStage } from './mcp-stage.ts';
import type { McpIngress } from './mcp-tools.ts';
import { createPipeline, type PipelineCall } from './pipeline.ts';
import { createSettler, settleStage } from './settle-stage.ts';

/** The catalog of one client `calc` (tools add, broken, manual), injected into chats or not. */
function catalogOf(injectIntoChat: boolean) {
  return buildSnapshot([
    aggregateView(
      mcpClientConfigSchema.parse({
        name: 'calc',
        connection_type: 'http',
        connection_string: 'http://127.0.0.1:1/mcp',
        tools_to_auto_execute: ['add', 'broken'],
        inject_into_chat: injectIntoChat,
      }),
      [
        {
          client: 'calc',
          runner: 'r',
          state: 'connected',
          tools: ['add', 'broken', 'manual'].map((name) => ({
            name,
            inputSchema: { $schema: 'http://json-schema.org/draft-07/schema#', type: 'object' },
          })),
          updated_at: 1,
          expires_at: Number.MAX_SAFE_INTEGER,
        },
      ],
    ),
  ]);
}

const snapshot = catalogOf(true);

function completion(toolCalls?: Array<{ id: string; name: string }>): CompletionResult {
  const message = toolCalls
    ? {
        role: 'assistant' as const,
        content: null,
        tool_calls: toolCalls.map((call) => ({
          id: call.id,
          type: 'function' as const,
          function: { name: call.name, arguments: '{}' },
        })),
      }
    : { role: 'assistant' as const, content: 'done' };
  return {
    provider: 'openai',
    response: {
      id: 'c',
      object: 'chat.completion',
      created: 1,
      model: 'm',
      choices: [{ index: 0, message, finish_reason: toolCalls ? 'tool_calls' : 'stop' }],
      usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
      extra_fields: { provider: 'openai', model_params: {}, latency: 0 },
    },
  };
}

function setup(script: CompletionResult[], depth = 5, catalog = snapshot) {
  const calls: CompletionRoute[] = [];
  const jobs: ToolJob[] = [];
  const authorizations: AuthorizeRequest[] = [];
  const settles: SettleRequest[] = [];
  const router = {
    async complete(route: CompletionRoute) {
      calls.push(structuredClone(route));
      return script.shift() ?? completion();
    },
    stream(route: CompletionRoute) {
      calls.push(route);
      return (async function* () {})();
    },
  } as Pick<RouterService, 'complete' | 'stream'> as RouterService;
  const admission: Admission = {
    async authorize(request) {
      authorizations.push(request);
      return {
        targets: [{ provider: 'openai', model: 'm' }],
        settlement: {
          reservationId: 'r',
          virtualKeyId: 'vk',
          counters: [],
          providerCounters: {},
          alternativeProviders: ['openai'],
          estimate: {
            model: 'm',
            provider: 'openai',
            usage: { prompt_tokens: 1, completion_tokens: 0, total_tokens: 1 },
          },
        },
      };
    },
    async settle(request) {
      settles.push(request);
      return { cost: 0 };
    },
  };
  const mcp: McpIngress = {
    catalog: { snapshot: () => catalog, refresh: async () => {} } as Pick<
      McpCatalog,
      'snapshot' | 'refresh'
    > as McpCatalog,
    executor: {
      async execute(job) {
        jobs.push(job);
        if (job.tool === 'broken') throw new GatewayError({ type: 'upstream_timeout', message: 'too slow' });
        return { content: `ran ${job.tool}`, isError: false };
      },
      async close() {},
    },
    settings: fixed({ queue_timeout_ms: 1_000, agent_max_depth: depth }),
  };
  const settler = createSettler({ admission, logger: createLogger({ service: 'test', level: 'silent' }) });
  const agent = createPipeline({
    admission,
    router,
    settler,
    stages: [settleStage(settler), mcpStage(mcp)],
  });
  return { agent, calls, jobs, authorizations, settles, settler };
}

function chatCall(overrides: Partial<PipelineCall['parsed']> = {}): PipelineCall {
  return {
    requestId: 'req',
    headers: {},
    signal: new AbortController().signal,
    parsed: {
      operation: 'chat',
      target: { provider: 'openai', model: 'm' },
      fallbacks: [],
      messages: [{ role: 'user', content: 'hi' }],
      params: {},
      stream: false,
      ...overrides,
    },
  };
}

describe('MCP agent loop', () => {
  it('runs automatic tools round after round and sums the usage of every round', async () => {
    const { agent, calls, jobs, authorizations, settles, settler } = setup([
      completion([{ id: 'a', name: 'calc-add' }]),
      completion([
        { id: 'b', name: 'calc-add' },
        { id: 'c', name: 'calc-broken' },
      ]),
    ]);
    const body = (await agent.complete(chatCall())).response;
    expect(body.choices[0]).toMatchObject({ message: { content: 'done' } });
    expect(body.usage).toEqual({ prompt_tokens: 30, completion_tokens: 15, total_tokens: 45 });
    expect(body.extra_fields.mcp_agent).toEqual({ rounds: 2, tool_calls: 3 });
    expect(jobs.map((job) => `${job.client}/${job.tool}/${job.callId}`)).toEqual([
      'calc/add/a',
      'calc/add/b',
      'calc/broken/c',
    ]);
    expect(calls).toHaveLength(3);
    // One authorization for the whole loop, one settle with the usage of every round.
    expect(authorizations).toHaveLength(1);
    await settler.drain();
    expect(settles.map((settle) => settle.usage)).toEqual([
      { prompt_tokens: 30, completion_tokens: 15, total_tokens: 45 },
    ]);
    const last = (calls[2] as Extract<CompletionRoute, { operation: 'chat' }>).messages;
    expect(last.slice(1)).toEqual([
      expect.objectContaining({ role: 'assistant', tool_calls: [expect.objectContaining({ id: 'a' })] }),
      { role: 'tool', content: 'ran add', tool_call_id: 'a' },
      expect.objectContaining({ role: 'assistant' }),
      { role: 'tool', content: 'ran add', tool_call_id: 'b' },
      // A failed tool is the tool's answer, so the model can go on.
      {
        role: 'tool',
        content: JSON.stringify({ error: { type: 'upstream_timeout', message: 'too slow' } }),
        tool_call_id: 'c',
      },
    ]);
    const tools = calls[0]!.params['tools'] as Array<{
      function: { name: string; parameters: object };
    }>;
    expect(tools.map((tool) => tool.function.name)).toEqual(['calc-add', 'calc-broken', 'calc-manual']);
    expect(tools[0]!.function.parameters).toEqual({ type: 'object' });
  });

  it('stops at the depth limit and answers the last response as it is', async () => {
    const again = () => completion([{ id: 'x', name: 'calc-add' }]);
    const { agent, calls } = setup([again(), again(), again(), again()], 2);
    const body = (await agent.complete(chatCall())).response;
    expect(calls).toHaveLength(3);
    expect(body.choices[0]?.finish_reason).toBe('tool_calls');
    expect(body.extra_fields['mcp_agent']).toMatchObject({ rounds: 2 });
  });

  it('returns answers with a tool call that is not automatic to the caller untouched', async () => {
    const mixed = completion([
      { id: 'a', name: 'calc-add' },
      { id: 'm', name: 'calc-manual' },
    ]);
    const { agent, calls, jobs } = setup([mixed]);
    expect(await agent.complete(chatCall())).toEqual({
      ...mixed,
      response: {
        ...mixed.response,
        extra_fields: {
          ...mixed.response.extra_fields,
          mcp_injected_tools: ['calc-add', 'calc-broken', 'calc-manual'],
        },
      },
    });
    expect(calls).toHaveLength(1);
    expect(jobs).toHaveLength(0);
  });

  it('adds the tools of a client not marked for injection only when the request names them', async () => {
    const quiet = catalogOf(false);
    const plain = setup([completion()], 5, quiet);
    const answer = await plain.agent.complete(chatCall());
    expect(plain.calls[0]!.params['tools']).toBeUndefined();
    expect(answer.response.extra_fields).not.toHaveProperty('mcp_injected_tools');

    const asked = setup([completion()], 5, quiet);
    const named = await asked.agent.complete({
      ...chatCall(),
      headers: { 'x-gw-mcp-include-tools': 'calc-add' },
    });
    const tools = asked.calls[0]!.params['tools'] as Array<{ function: { name: string } }>;
    expect(tools.map((tool) => tool.function.name)).toEqual(['calc-add']);
    expect(named.response.extra_fields).toMatchObject({ mcp_injected_tools: ['calc-add'] });
  });

  it('injects tools into streams (no loop) and leaves text completions alone', async () => {
    const { agent, calls } = setup([]);
    await agent.stream(
      chatCall({ stream: true, params: { tools: [{ type: 'function', function: { name: 'calc-add' } }] } }),
    );
    const tools = calls[0]!.params['tools'] as Array<{ function: { name: string } }>;
    // The caller's tool of the same name stays; the MCP one is left out.
    expect(tools.map((tool) => tool.function.name)).toEqual(['calc-add', 'calc-broken', 'calc-manual']);
    expect(tools[0]).toEqual({ type: 'function', function: { name: 'calc-add' } });
    await agent.complete(chatCall({ operation: 'text', messages: undefined, prompt: 'hi' }));
    expect(calls[1]!.params).toEqual({});
  });
});
