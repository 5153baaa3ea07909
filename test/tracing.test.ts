// Distributed tracing (docs/tracing.md), both modes: a request that comes with a caller's `traceparent` is one
// trace across ingress, governance, router, the upstream call and the MCP runner, each process exporting its
// own spans over OTLP/HTTP to an in-test receiver; GenAI attributes are there, secrets and content are not;
// sampling is parent-based (the gateway's ratio here is 0, so only callers' sampled traces are recorded).
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import {
  type FakeOpenAi,
  type GatewayConfigInput,
  type LaunchedGateway,
  MCP_SERVER_ENTRIES,
  type OtlpReceiver,
  type ReceivedSpan,
  scaled,
  startCluster,
  startEmbedded,
  startFakeOpenAi,
  startOtlpReceiver,
  stdioServer,
  waitFor,
} from '@gw/testkit';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { post } from './support/http.ts';

const UPSTREAM_KEY = 'sk-upstream-trace-0123456789abcdef';
const VIRTUAL_KEY = 'sk-gw-trace00000000000000000000000000000000000';
const PROMPT = 'a prompt that must stay out of traces';
const ANSWER = 'Hello from the fake upstream';

type TracingInput = NonNullable<GatewayConfigInput['tracing']>;

function config(fake: FakeOpenAi, receiver: OtlpReceiver, tracing: TracingInput = {}): GatewayConfigInput {
  return {
    providers: {
      openai: {
        keys: [{ id: 'key-1', value: UPSTREAM_KEY }],
        network_config: { base_url: fake.url, max_retries: 0 },
      },
    },
    governance: {
      virtual_keys: [
        {
          id: 'vk-trace',
          name: 'tracing',
          value: VIRTUAL_KEY,
          provider_configs: [{ provider: 'openai', allowed_models: ['*'] }],
        },
      ],
    },
    mcp: {
      clients: [
        {
          name: 'everything',
          connection_type: 'stdio',
          stdio_config: stdioServer(MCP_SERVER_ENTRIES.everything, ['stdio']),
          allow_by_default: true,
        },
      ],
    },
    tracing: {
      enabled: true,
      endpoint: receiver.url,
      // Only a caller's sampled trace is recorded (parent-based): a root request is not.
      sampling_ratio: 0,
      scheduled_delay_ms: 100,
      ...tracing,
    },
  };
}

/** A caller's trace context: a fresh trace id and the caller's own span id. */
function callerContext(sampled = true) {
  const traceId = randomBytes(16).toString('hex');
  const spanId = randomBytes(8).toString('hex');
  return { traceId, spanId, traceparent: `00-${traceId}-${spanId}-${sampled ? '01' : '00'}` };
}

function chat(gateway: LaunchedGateway, headers: Record<string, string>) {
  return post(
    `${gateway.url}/v1/chat/completions`,
    { model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: PROMPT }] },
    { headers: { authorization: `Bearer ${VIRTUAL_KEY}`, ...headers } },
  );
}

function executeEcho(gateway: LaunchedGateway, headers: Record<string, string>) {
  return post(
    `${gateway.url}/v1/mcp/tool/execute`,
    {
      type: 'function',
      id: 'call-7',
      function: { name: 'everything-echo', arguments: '{"message":"tool-input"}' },
    },
    { headers },
  );
}

/** Waits until the MCP client is connected (its tools known): a call answers 200. Untraced, so unsampled. */
async function mcpReady(gateway: LaunchedGateway): Promise<void> {
  await waitFor(async () => (await executeEcho(gateway, {})).status === 200, {
    timeoutMs: 20_000,
    what: 'the MCP client to connect',
  });
}

/** The one span named `name` (the test fails naming what is there when there is not exactly one). */
function only(spans: ReceivedSpan[], name: string | RegExp): ReceivedSpan {
  const found = spans.filter((span) =>
    typeof name === 'string' ? span.name === name : name.test(span.name),
  );
  expect(
    found,
    `${name} among ${spans.map((span) => `${span.service}:${span.name}`).join(', ')}`,
  ).toHaveLength(1);
  return found[0]!;
}

const names = (spans: ReceivedSpan[]) => new Set(spans.map((span) => span.name));

const MODES = [
  ['embedded', (document: GatewayConfigInput) => startEmbedded({ config: document })],
  ['cluster', (document: GatewayConfigInput) => startCluster({ config: document })],
] as const;

describe.each(MODES)('tracing (%s)', (_mode, launch) => {
  let fake: FakeOpenAi;
  let receiver: OtlpReceiver;
  let gateway: LaunchedGateway;

  beforeAll(async () => {
    fake = await startFakeOpenAi();
    receiver = await startOtlpReceiver();
    gateway = await launch(config(fake, receiver));
    await mcpReady(gateway);
  }, scaled(60_000));

  afterAll(async () => {
    await gateway?.close();
    await receiver?.close();
    await fake?.close();
  });

  beforeEach(() => {
    fake.requests.length = 0;
  });

  it('makes one trace of a request across ingress, governance, router and the upstream call', async () => {
    const caller = callerContext();
    const answer = await chat(gateway, { traceparent: caller.traceparent, tracestate: 'caller=1' });
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);

    const complete = (spans: ReceivedSpan[]) =>
      [
        'POST /v1/chat/completions',
        'gw.governance.authorize',
        'gw.governance.settle',
        'gw.router.complete',
      ].every((name) => names(spans).has(name)) && spans.some((span) => span.name === 'chat gpt-4o-mini');
    const spans = await receiver.trace(caller.traceId, complete);
    const ingress = only(spans, 'POST /v1/chat/completions');
    const authorize = only(spans, 'gw.governance.authorize');
    const settle = only(spans, 'gw.governance.settle');
    const router = only(spans, 'gw.router.complete');
    const attempt = only(spans, 'chat gpt-4o-mini');

    // Each process exports its own spans, under its own service name, in both modes.
    expect([ingress, authorize, settle, router, attempt].map((span) => span.service)).toEqual([
      'gw-ingress',
      'gw-governance',
      'gw-governance',
      'gw-router',
      'gw-router',
    ]);
    // The parent links: caller → ingress → governance, router → attempt → upstream.
    expect(ingress.parentSpanId).toBe(caller.spanId);
    expect(ingress.kind).toBe(2);
    expect(authorize.parentSpanId).toBe(ingress.spanId);
    expect(settle.parentSpanId).toBe(ingress.spanId);
    expect(router.parentSpanId).toBe(ingress.spanId);
    expect(attempt.parentSpanId).toBe(router.spanId);
    expect(attempt.kind).toBe(3);
    const upstream = fake.requests.at(-1)!;
    expect(upstream.headers['traceparent']).toBe(`00-${caller.traceId}-${attempt.spanId}-01`);
    expect(upstream.headers['tracestate']).toBe('caller=1');

    // GenAI attributes: provider, models, tokens, finish reasons; the key's id, never its value.
    expect(ingress.attributes).toMatchObject({
      'http.route': '/v1/chat/completions',
      'http.response.status_code': 200,
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'openai',
      'gen_ai.system': 'openai',
      'gen_ai.request.model': 'gpt-4o-mini',
      'gen_ai.response.model': 'gpt-4o-mini',
      'gen_ai.usage.input_tokens': 11,
      'gen_ai.usage.output_tokens': 7,
      'gen_ai.response.finish_reasons': ['stop'],
    });
    expect(authorize.attributes).toMatchObject({
      'gw.virtual_key.id': 'vk-trace',
      'gw.governance.kind': 'llm',
    });
    expect(attempt.attributes).toMatchObject({
      'gen_ai.provider.name': 'openai',
      'gen_ai.request.model': 'gpt-4o-mini',
      'gw.provider.key_id': 'key-1',
      'gw.attempt': 1,
    });
    expect(router.attributes).toMatchObject({ 'gen_ai.response.finish_reasons': ['stop'] });

    // No secret and no content anywhere in what was exported.
    const exported = receiver.bodies.join('\n');
    for (const forbidden of [UPSTREAM_KEY, VIRTUAL_KEY, PROMPT, ANSWER])
      expect(exported).not.toContain(forbidden);
    expect(spans.some((span) => 'gen_ai.input.messages' in span.attributes)).toBe(false);
  });

  it('records a failed attempt with its error type and the upstream status', async () => {
    fake.enqueue({ status: 503, json: { error: { message: 'overloaded', type: 'server_error' } } });
    const caller = callerContext();
    const answer = await chat(gateway, { traceparent: caller.traceparent });
    expect(answer.status).toBe(503);
    const spans = await receiver.trace(caller.traceId, (found) =>
      ['POST /v1/chat/completions', 'chat gpt-4o-mini'].every((name) => names(found).has(name)),
    );
    expect(only(spans, 'chat gpt-4o-mini')).toMatchObject({
      status: { code: 2 },
      attributes: { 'error.type': 'upstream_error', 'http.response.status_code': 503 },
    });
    expect(only(spans, 'POST /v1/chat/completions').attributes).toMatchObject({
      'error.type': 'upstream_error',
      'http.response.status_code': 503,
    });
  });

  it('traces a stream to its end: the router span and the ingress span carry its usage and finish', async () => {
    const caller = callerContext();
    const response = await fetch(`${gateway.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', traceparent: caller.traceparent },
      body: JSON.stringify({
        model: 'openai/gpt-4o-mini',
        messages: [{ role: 'user', content: PROMPT }],
        stream: true,
      }),
      signal: AbortSignal.timeout(scaled(10_000)),
    });
    expect(response.status).toBe(200);
    await response.text();
    const spans = await receiver.trace(caller.traceId, (found) =>
      ['POST /v1/chat/completions', 'gw.router.stream', 'chat gpt-4o-mini'].every((name) =>
        names(found).has(name),
      ),
    );
    const ingress = only(spans, 'POST /v1/chat/completions');
    const router = only(spans, 'gw.router.stream');
    expect(router.parentSpanId).toBe(ingress.spanId);
    expect(only(spans, 'chat gpt-4o-mini').parentSpanId).toBe(router.spanId);
    for (const span of [ingress, router]) {
      expect(span.attributes).toMatchObject({
        'gen_ai.provider.name': 'openai',
        'gen_ai.response.model': 'gpt-4o-mini',
        'gen_ai.response.finish_reasons': ['stop'],
        'gen_ai.usage.input_tokens': 9,
        'gen_ai.usage.output_tokens': 3,
      });
    }
    expect(fake.requests.at(-1)!.headers['traceparent']).toMatch(new RegExp(`^00-${caller.traceId}-`));
  });

  it('carries the context to the MCP runner in the tool job', async () => {
    const caller = callerContext();
    const answer = await executeEcho(gateway, { traceparent: caller.traceparent });
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    const spans = await receiver.trace(caller.traceId, (found) =>
      ['POST /v1/mcp/tool/execute', 'execute_tool echo'].every((name) => names(found).has(name)),
    );
    const ingress = only(spans, 'POST /v1/mcp/tool/execute');
    const tool = only(spans, 'execute_tool echo');
    expect(tool.service).toBe('gw-mcp-runner');
    expect(tool.parentSpanId).toBe(ingress.spanId);
    expect(tool.attributes).toMatchObject({
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': 'echo',
      'gen_ai.tool.call.id': 'call-7',
      'gw.mcp.client': 'everything',
    });
    expect(tool.attributes).not.toHaveProperty('gen_ai.tool.call.arguments');
    expect(receiver.bodies.join('\n')).not.toContain('tool-input');
  });

  it('follows the sampling decision: a caller’s unsampled trace and a root request at ratio 0 export nothing', async () => {
    const unsampled = callerContext(false);
    expect((await chat(gateway, { traceparent: unsampled.traceparent })).status).toBe(200);
    expect(fake.requests.at(-1)!.headers['traceparent']).toMatch(
      new RegExp(`^00-${unsampled.traceId}-[0-9a-f]{16}-00$`),
    );
    const root = await chat(gateway, {});
    expect(root.status).toBe(200);
    // A root request's upstream call still carries the (unsampled) context, so the provider could join it.
    const rootTrace = /^00-([0-9a-f]{32})-[0-9a-f]{16}-00$/.exec(
      String(fake.requests.at(-1)!.headers['traceparent']),
    );
    expect(rootTrace).not.toBeNull();
    // A sampled request made after both is exported; by then nothing of the two may have been.
    const sampled = callerContext();
    expect((await chat(gateway, { traceparent: sampled.traceparent })).status).toBe(200);
    await receiver.trace(sampled.traceId, (spans) => names(spans).has('gw.governance.settle'));
    const traces = new Set(receiver.spans.map((span) => span.traceId));
    expect(traces.has(unsampled.traceId)).toBe(false);
    expect(traces.has(rootTrace![1]!)).toBe(false);
  });
});

describe('tracing with include_content (embedded)', () => {
  it('records the prompt, the answer and the tool call, still without secrets', async () => {
    const fake = await startFakeOpenAi();
    const receiver = await startOtlpReceiver();
    const gateway = await startEmbedded({
      config: config(fake, receiver, { include_content: true }),
    });
    try {
      await mcpReady(gateway);
      const caller = callerContext();
      const headers = { traceparent: caller.traceparent };
      expect((await chat(gateway, headers)).status).toBe(200);
      expect((await executeEcho(gateway, headers)).status).toBe(200);
      const spans = await receiver.trace(caller.traceId, (found) =>
        ['gw.governance.settle', 'execute_tool echo'].every((name) => names(found).has(name)),
      );
      const ingress = only(spans, 'POST /v1/chat/completions');
      expect(String(ingress.attributes['gen_ai.input.messages'])).toContain(PROMPT);
      expect(String(ingress.attributes['gen_ai.output.messages'])).toContain(ANSWER);
      const tool = only(spans, 'execute_tool echo');
      expect(tool.attributes['gen_ai.tool.call.arguments']).toBe('{"message":"tool-input"}');
      expect(String(tool.attributes['gen_ai.tool.call.result'])).toContain('Echo: tool-input');
      const exported = receiver.bodies.join('\n');
      for (const forbidden of [UPSTREAM_KEY, VIRTUAL_KEY]) expect(exported).not.toContain(forbidden);
    } finally {
      await gateway.close();
      await receiver.close();
      await fake.close();
    }
  });
});

describe('tracing off', () => {
  const PROBE = fileURLToPath(new URL('./support/tracing-module-probe.ts', import.meta.url));

  /** Runs the embedded gateway in a fresh process, serves one traced request, and lists the OTel modules it loaded. */
  async function loadedOtelModules(enabled: boolean): Promise<{ modules: string[]; exported: number }> {
    const child = spawn(process.execPath, [PROBE, enabled ? 'on' : 'off'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString('utf8');
    });
    child.stderr.on('data', (chunk: Buffer) => {
      output += chunk.toString('utf8');
    });
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    expect(code, output).toBe(0);
    return JSON.parse(output.trim().split('\n').at(-1)!);
  }

  it('loads no OpenTelemetry module and exports nothing (and the probe sees them when it is on)', {
    timeout: scaled(60_000),
  }, async () => {
    const off = await loadedOtelModules(false);
    // prom-client loads the API package (its exemplars) whatever tracing says; nothing of the SDK may load.
    expect(off.modules.filter((name) => name !== '@opentelemetry/api')).toEqual([]);
    expect(off.exported).toBe(0);
    const on = await loadedOtelModules(true);
    expect(on.modules).toEqual(
      expect.arrayContaining(['@opentelemetry/sdk-trace', '@opentelemetry/otlp-exporter-base']),
    );
    expect(on.exported).toBeGreaterThan(0);
  });
});
