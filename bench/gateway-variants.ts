// What the bench scripts share: the embedded gateway's config variants and the governed rows' virtual key, the
// request they send, and how they start the mock and wait for a gateway.
import { type ChildProcess, spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

export const BODY = JSON.stringify({
  model: 'openai/gpt-4o-mini',
  messages: [{ role: 'user', content: 'hello' }],
  max_tokens: 16,
});

/**
 * BODY with a new question each call (`hello 00000001`, `hello 00000002`, …, all of one length), as `load.ts`
 * takes a body made per request: the `cache` variant's key covers the messages, so every request misses (a fixed
 * body would hit from the second on). Every variant sends these, so each one's difference from `off` is its
 * feature alone; the bodies are made by the load generator, whose CPU is not the gateway's.
 */
export function questions(stream = false): () => Buffer {
  let asked = 0;
  return () =>
    Buffer.from(
      JSON.stringify({
        model: 'openai/gpt-4o-mini',
        messages: [{ role: 'user', content: `hello ${String(++asked).padStart(8, '0')}` }],
        max_tokens: 16,
        ...(stream && { stream: true }),
      }),
    );
}

/** The virtual key of the governed rows (`pnpm bench`, `bench:netns`, `bench:soak`). */
export const VIRTUAL_KEY = 'sk-gw-bench00000000000000000000000000000000000';

/** The config lines of VIRTUAL_KEY: its budget and limits, never reached, are counted on every request. */
export const VIRTUAL_KEY_CONFIG = [
  'governance:',
  '  virtual_keys:',
  '    - name: bench',
  `      value: '${VIRTUAL_KEY}'`,
  '      provider_configs: [{ provider: openai, allowed_models: ["*"] }]',
  '      budget: { max_limit: 1000000, reset_duration: 1d }',
  '      rate_limit: { request_max_limit: 1000000000, request_reset_duration: 1m, token_max_limit: 1000000000, token_reset_duration: 1m }',
];

/**
 * The rule of PII_GUARDRAIL: a request names it (`x-gw-guardrail-id`) to have it applied, so `pnpm bench`'s `+pii`
 * rows choose it by header and its `+4k` rows run with the same config.
 */
export const PII_GUARDRAIL_RULE = 'bench-pii';

/** A built-in PII profile on input, redacting; its rule applies only to requests that name it. */
export const PII_GUARDRAIL = [
  'guardrails:',
  '  profiles:',
  '    - { id: bench-pii, type: builtin, pii: [email, phone, card, iban, secret] }',
  '  rules:',
  `    - { id: ${PII_GUARDRAIL_RULE}, condition: 'false', action: REDACT, input_profiles: [bench-pii] }`,
];

/** The header the tenth of ROUTING_RULES matches (`pnpm bench`'s `+rule` rows). */
export const ROUTING_RULE_HEADER = 'x-bench-route';

/** Ten global routing rules of the shapes operators write (docs/routing.md), nine of which no bench request matches. */
export const ROUTING_RULES = [
  '"x-tier" in headers && headers["x-tier"] == "gold"',
  'tokens > 100000',
  'has(key.metadata.tier) && key.metadata.tier == "enterprise"',
  'model.startsWith("claude-") && stream',
  'team.name == "research" || customer.name == "acme"',
  '"temperature" in params && params.temperature > 1.5',
  'request_type == "embeddings"',
  'provider == "anthropic" && tokens > 5000',
  '"user-agent" in headers && headers["user-agent"] == "never-this-agent"',
  `"${ROUTING_RULE_HEADER}" in headers`,
].map(
  (expression, index) =>
    `    - { name: bench-rule-${index}, cel_expression: '${expression}', priority: ${index}, targets: [{ provider: openai, model: gpt-4o-mini }] }`,
);

/**
 * The response cache, exact matches only, for the bench's requests, which carry no virtual key: without
 * `anonymous: true` the cache would pass them by unlooked-at (docs/cache.md "Callers without a virtual key").
 * With `questions()` every request is a miss whose answer is stored after it is sent; under load the scope is
 * full (10,000 entries) and each store evicts the oldest, the steady state of a cache that misses.
 */
const RESPONSE_CACHE = ['cache:', '  enabled: true', '  types: [exact]', '  anonymous: true'];

/** Not a config of gw: the bench's minimal Node proxy (bench/floor-proxy.ts) in a gateway's place. */
const FLOOR = 'floor';

/** The mock's key: gw's provider config holds it; the floor passes the caller's on, so its requests carry it. */
const UPSTREAM_KEY = 'sk-bench';

/** A config of the embedded gateway: its config file's sections, and the headers each of its requests carries. */
interface Variant {
  sections: (mock: string) => string[];
  headers?: Record<string, string>;
}

const LOGS_OFF = ['logs:', '  enabled: false'];

/**
 * The variants of `bench:threads` and `bench:instructions`: `off` (request logs off, nothing else configured),
 * and `off` plus exactly one feature each, so that a variant's difference from `off` is that feature's cost.
 */
const VARIANTS: Record<string, Variant> = {
  off: { sections: () => LOGS_OFF },
  logs: { sections: () => ['logs:', '  enabled: true'] },
  trace0: { sections: (mock) => [...LOGS_OFF, ...tracing(mock, 0)] },
  'trace0.01': { sections: (mock) => [...LOGS_OFF, ...tracing(mock, 0.01)] },
  trace1: { sections: (mock) => [...LOGS_OFF, ...tracing(mock, 1)] },
  // `pnpm bench`'s BENCH_GUARDRAILS=pii config: a PII guardrail whose rule applies only to requests that name it.
  guardrails: { sections: () => [...LOGS_OFF, ...PII_GUARDRAIL] },
  cache: { sections: () => [...LOGS_OFF, ...RESPONSE_CACHE] },
  // `pnpm bench`'s BENCH_ROUTING=rules config: ten rules every request evaluates, none matching.
  rules: { sections: () => [...LOGS_OFF, 'governance:', '  routing_rules:', ...ROUTING_RULES] },
  // `pnpm bench`'s `+vk` rows: the virtual key on every request, its budget and limits counted.
  vk: { sections: () => [...LOGS_OFF, ...VIRTUAL_KEY_CONFIG], headers: { 'x-gw-vk': VIRTUAL_KEY } },
};

/** The variants named in an environment variable (comma-separated), refused before anything runs when unknown. */
export function variantNames(variable: string, fallback: string): string[] {
  const names = (process.env[variable] ?? fallback).split(',');
  for (const name of names)
    if (name !== FLOOR && !Object.hasOwn(VARIANTS, name))
      throw new Error(`${variable}: no variant '${name}' (${[...Object.keys(VARIANTS), FLOOR].join(', ')})`);
  return names;
}

function tracing(mock: string, ratio: number): string[] {
  return ['tracing:', '  enabled: true', `  sampling_ratio: ${ratio}`, `  endpoint: '${mock}/v1/traces'`];
}

export function listening(child: ChildProcess): Promise<number> {
  return new Promise((done, fail) => {
    child.stdout?.on('data', (chunk: Buffer) => {
      const port = /"port":(\d+)/.exec(chunk.toString())?.[1];
      if (port) done(Number(port));
    });
    child.once('exit', (code) => fail(new Error(`the mock exited with ${code}`)));
  });
}

/** A port nothing listens on now. */
function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => done(port));
    });
    server.once('error', fail);
  });
}

/** Waits for a gateway's /health (a gateway under valgrind takes minutes to start on a busy machine). */
async function healthy(url: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    try {
      if ((await fetch(`${url}/health`)).ok) return;
    } catch {}
    await sleep(500);
  }
  throw new Error(`no answer from ${url}/health in ${timeoutMs / 60_000} minutes`);
}

/** A variant's config file: one provider at the mock, and the variant's sections. */
function gatewayConfig(mockUrl: string, variant: string): string {
  const sections = VARIANTS[variant]?.sections;
  if (!sections) throw new Error(`no variant '${variant}' (${Object.keys(VARIANTS).join(', ')})`);
  return [
    'providers:',
    '  openai:',
    `    keys: [{ value: '${UPSTREAM_KEY}' }]`,
    `    network_config: { base_url: '${mockUrl}' }`,
    ...sections(mockUrl),
    '',
  ].join('\n');
}

/**
 * An embedded gateway of the checkout at `root` with a variant's config (written next to its data directory
 * `dir`), once its /health answers, and the headers the variant's requests carry; `prefix` runs it under another
 * program (valgrind).
 */
export async function startGateway(options: {
  root: string;
  dir: string;
  mockUrl: string;
  variant: string;
  prefix?: string[];
  nodeFlags?: string[];
  /** How long it may take to answer /health; 5 minutes by default. */
  startTimeoutMs?: number;
}): Promise<{ gateway: ChildProcess; url: string; headers: Record<string, string> }> {
  const port = await freePort();
  // The floor (bench/floor-proxy.ts): the least a Node gateway can do, measured the same way as each variant.
  const floor = options.variant === FLOOR;
  if (!floor) writeFileSync(`${options.dir}.yaml`, gatewayConfig(options.mockUrl, options.variant));
  const [command, ...args] = [
    ...(options.prefix ?? []),
    process.execPath,
    ...(options.nodeFlags ?? []),
    ...(floor
      ? [resolve(import.meta.dirname, 'floor-proxy.ts'), `--port=${port}`, `--upstream=${options.mockUrl}`]
      : ['src/embedded.ts']),
  ];
  const gateway = spawn(command!, args, {
    cwd: options.root,
    env: {
      ...process.env,
      PORT: String(port),
      GW_HOST: '127.0.0.1',
      GATEWAY_DATA_DIR: options.dir,
      GATEWAY_CONFIG: `${options.dir}.yaml`,
      LOG_LEVEL: 'warn',
    },
    stdio: 'ignore',
  });
  try {
    await healthy(`http://127.0.0.1:${port}`, options.startTimeoutMs ?? 300_000);
  } catch (error) {
    gateway.kill('SIGKILL');
    throw error;
  }
  return {
    gateway,
    url: `http://127.0.0.1:${port}/v1/chat/completions`,
    headers: floor ? { authorization: `Bearer ${UPSTREAM_KEY}` } : (VARIANTS[options.variant]?.headers ?? {}),
  };
}
