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

/** Not a config of gw: the bench's minimal Node proxy (bench/floor-proxy.ts) in a gateway's place. */
export const FLOOR = 'floor';

export const VARIANTS: Record<string, (mock: string) => string[]> = {
  off: () => ['logs:', '  enabled: false'],
  logs: () => ['logs:', '  enabled: true'],
  trace0: (mock) => ['logs:', '  enabled: false', ...tracing(mock, 0)],
  'trace0.01': (mock) => ['logs:', '  enabled: false', ...tracing(mock, 0.01)],
  trace1: (mock) => ['logs:', '  enabled: false', ...tracing(mock, 1)],
  // `pnpm bench`'s BENCH_GUARDRAILS=pii config: a PII guardrail whose rule applies only to requests that name it.
  guardrails: () => ['logs:', '  enabled: false', ...PII_GUARDRAIL],
};

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

/** Waits for a gateway's /health (a gateway under valgrind takes a minute or more to start). */
async function healthy(url: string): Promise<void> {
  for (let attempt = 0; attempt < 600; attempt++) {
    try {
      if ((await fetch(`${url}/health`)).ok) return;
    } catch {}
    await sleep(500);
  }
  throw new Error(`no answer from ${url}/health in 5 minutes`);
}

/** A variant's config file: one provider at the mock, and the variant's sections. */
function gatewayConfig(mockUrl: string, variant: string): string {
  const sections = VARIANTS[variant];
  if (!sections) throw new Error(`no variant '${variant}' (${Object.keys(VARIANTS).join(', ')})`);
  return [
    'providers:',
    '  openai:',
    "    keys: [{ value: 'sk-bench' }]",
    `    network_config: { base_url: '${mockUrl}' }`,
    ...sections(mockUrl),
    '',
  ].join('\n');
}

/**
 * An embedded gateway of the checkout at `root` with a variant's config (written next to its data directory
 * `dir`), once its /health answers; `prefix` runs it under another program (valgrind).
 */
export async function startGateway(options: {
  root: string;
  dir: string;
  mockUrl: string;
  variant: string;
  prefix?: string[];
  nodeFlags?: string[];
}): Promise<{ gateway: ChildProcess; url: string }> {
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
    await healthy(`http://127.0.0.1:${port}`);
  } catch (error) {
    gateway.kill('SIGKILL');
    throw error;
  }
  return { gateway, url: `http://127.0.0.1:${port}/v1/chat/completions` };
}
