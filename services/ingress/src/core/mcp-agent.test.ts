// The agent loop around the completion pipeline, with a scripted pipeline and a stand-in tool executor: depth
// limit, mixed tool calls, a failing tool, usage of all rounds, streaming (injection only), text completions.
import type { GovernanceService } from '@gw/governance';
import { aggregateView, buildSnapshot, type McpCatalog, type ToolJob } from '@gw/mcp-runner/control';
import type { CompleteResult } from '@gw/router';
import { GatewayError, mcpClientConfigSchema } from '@gw/shared';
import { describe, expect, it } from 'vitest';
import type { CompletionPipeline, PipelineCall } from './completion-pipeline.ts';
import { withMcpAgent } from './mcp-agent.ts';
import type { McpRouteDependencies } from './mcp-tools.ts';

const snapshot = buildSnapshot([
  aggregateView(
    mcpClientConfigSchema.parse({
      name: 'calc',
      connection_type: 'http',
      connection_string: 'http://127.0.0.1:1/mcp',
      tools_to_auto_execute: ['add', 'broken'],
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

function completion(toolCalls?: Array<{ id: string; name: string }>): CompleteResult {
  const message = toolCalls
    ? {
        role: 'assistant',
        content: null,
        tool_calls: toolCalls.map((call) => ({
          id: call.id,
          type: 'function',
          function: { name: call.name, arguments: '{}' },
        })),
      }
    : { role: 'assistant', content: 'done' };
  const usage = { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 };
  return {
    body: JSON.stringify({
      choices: [{ index: 0, message, finish_reason: toolCalls ? 'tool_calls' : 'stop' }],
      usage,
    }),
    provider: 'openai',
    model: 'm',
    usage,
  };
}

function setup(script: CompleteResult[], depth = 5) {
  const calls: PipelineCall[] = [];
  const jobs: ToolJob[] = [];
  const pipeline = {
    async complete(call: PipelineCall) {
      calls.push(structuredClone({ ...call, signal: undefined }) as unknown as PipelineCall);
      return script.shift() ?? completion();
    },
    async stream(call: PipelineCall) {
      calls.push(call);
      return (async function* () {})();
    },
    async drain() {},
  } as unknown as CompletionPipeline;
  const mcp: McpRouteDependencies = {
    catalog: { snapshot: () => snapshot, refresh: async () => {} } as unknown as McpCatalog,
    executor: {
      async execute(job) {
        jobs.push(job);
        if (job.tool === 'broken')
          throw new GatewayError({ type: 'upstream_timeout', status: 504, message: 'too slow' });
        return { content: `ran ${job.tool}`, isError: false };
      },
      async close() {},
    },
    settings: { queue_timeout_ms: 1_000, agent_max_depth: depth },
    governance: { authorize: async () => ({ targets: [] }) } as unknown as GovernanceService,
  };
  return { agent: withMcpAgent(pipeline, mcp), calls, jobs };
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
      promptTokens: 1,
      ...overrides,
    },
  };
}

describe('MCP agent loop', () => {
  it('runs automatic tools round after round and sums the usage of every round', async () => {
    const { agent, calls, jobs } = setup([
      completion([{ id: 'a', name: 'calc-add' }]),
      completion([
        { id: 'b', name: 'calc-add' },
        { id: 'c', name: 'calc-broken' },
      ]),
    ]);
    const result = await agent.complete(chatCall());
    const body = JSON.parse(result.body);
    expect(body.choices[0].message.content).toBe('done');
    expect(body.usage).toEqual({ prompt_tokens: 30, completion_tokens: 15, total_tokens: 45 });
    expect(body.extra_fields.mcp_agent).toEqual({ rounds: 2, tool_calls: 3 });
    expect(jobs.map((job) => `${job.client}/${job.tool}/${job.callId}`)).toEqual([
      'calc/add/a',
      'calc/add/b',
      'calc/broken/c',
    ]);
    expect(calls).toHaveLength(3);
    const last = calls[2]!.parsed.messages!;
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
    const tools = calls[0]!.parsed.params['tools'] as Array<{
      function: { name: string; parameters: object };
    }>;
    expect(tools.map((tool) => tool.function.name)).toEqual(['calc-add', 'calc-broken', 'calc-manual']);
    expect(tools[0]!.function.parameters).toEqual({ type: 'object' });
  });

  it('stops at the depth limit and answers the last response as it is', async () => {
    const again = () => completion([{ id: 'x', name: 'calc-add' }]);
    const { agent, calls } = setup([again(), again(), again(), again()], 2);
    const body = JSON.parse((await agent.complete(chatCall())).body);
    expect(calls).toHaveLength(3);
    expect(body.choices[0].finish_reason).toBe('tool_calls');
    expect(body.extra_fields.mcp_agent.rounds).toBe(2);
  });

  it('returns answers with a tool call that is not automatic to the caller untouched', async () => {
    const mixed = completion([
      { id: 'a', name: 'calc-add' },
      { id: 'm', name: 'calc-manual' },
    ]);
    const { agent, calls, jobs } = setup([mixed]);
    expect(await agent.complete(chatCall())).toBe(mixed);
    expect(calls).toHaveLength(1);
    expect(jobs).toHaveLength(0);
  });

  it('injects tools into streams (no loop) and leaves text completions alone', async () => {
    const { agent, calls } = setup([]);
    await agent.stream(
      chatCall({ stream: true, params: { tools: [{ type: 'function', function: { name: 'calc-add' } }] } }),
    );
    const tools = calls[0]!.parsed.params['tools'] as Array<{ function: { name: string } }>;
    // The caller's tool of the same name stays; the MCP one is left out.
    expect(tools.map((tool) => tool.function.name)).toEqual(['calc-add', 'calc-broken', 'calc-manual']);
    expect(tools[0]).toEqual({ type: 'function', function: { name: 'calc-add' } });
    await agent.complete(chatCall({ operation: 'text', messages: undefined, prompt: 'hi' }));
    expect(calls[1]!.parsed.params).toEqual({});
  });
});
