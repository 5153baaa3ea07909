// The config file contract (README.md "Configuration"): GATEWAY_CONFIG (JSON or YAML), `env.NAME` secrets, and a
// start-up failure that names the field.
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { type AddressInfo, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  adminEnvironmentSchema,
  ConfigError,
  embeddedEnvironmentSchema,
  governanceEnvironmentSchema,
  ingressEnvironmentSchema,
  loadGatewayConfig,
  mcpRunnerEnvironmentSchema,
  otlpTracesEndpoint,
  parseGatewayConfig,
  readEnvironment,
  routerEnvironmentSchema,
} from '@gw/shared';
import { type GatewayConfigInput, listenerPid, scaled, startCluster, waitFor } from '@gw/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';

const EMBEDDED_ENTRY = fileURLToPath(new URL('../src/embedded.ts', import.meta.url));

let directory: string;

beforeAll(async () => {
  directory = await mkdtemp(join(tmpdir(), 'gw-config-test-'));
});

afterAll(async () => {
  await rm(directory, { recursive: true, force: true });
});

async function file(name: string, text: string): Promise<string> {
  const path = join(directory, name);
  await writeFile(path, text);
  return path;
}

/** The error a config load fails with (the test fails when it does not fail). */
async function loadError(path: string, env: NodeJS.ProcessEnv = {}): Promise<Error> {
  try {
    await loadGatewayConfig(path, env);
  } catch (error) {
    return error as Error;
  }
  throw new Error('the config loaded, but it should have been rejected');
}

const document = {
  client: { enforce_virtual_keys: false, required_headers: ['X-Team'], max_request_body_bytes: 65_536 },
  providers: {
    openai: {
      keys: [{ value: 'env.TEST_OPENAI_KEY', weight: 2 }],
      network_config: { base_url: 'env.TEST_UPSTREAM_URL', max_retries: 1 },
    },
  },
  governance: { virtual_keys: [{ name: 'team-a', value: 'env.TEST_VIRTUAL_KEY' }] },
};

const yamlDocument = `# the same gateway as the JSON document
client:
  enforce_virtual_keys: false
  required_headers: [X-Team]
  max_request_body_bytes: 65536
providers:
  openai:
    keys:
      - value: env.TEST_OPENAI_KEY
        weight: 2
    network_config:
      base_url: env.TEST_UPSTREAM_URL
      max_retries: 1
governance:
  virtual_keys:
    - name: team-a
      value: env.TEST_VIRTUAL_KEY
`;

const env = {
  TEST_OPENAI_KEY: 'sk-from-the-environment',
  TEST_UPSTREAM_URL: 'http://127.0.0.1:9/',
  TEST_VIRTUAL_KEY: 'sk-gw-from-the-environment',
};

describe('config loader', () => {
  it('reads a JSON file named by GATEWAY_CONFIG and applies defaults', async () => {
    const path = await file('gateway.json', JSON.stringify(document));
    const config = await loadGatewayConfig(path, env);
    expect(config.client).toMatchObject({
      enforce_virtual_keys: false,
      required_headers: ['x-team'],
      max_request_body_bytes: 65_536,
      send_raw_response: true,
      allow_anonymous_admin: false,
    });
    expect(config.providers['openai']?.network_config).toMatchObject({
      base_url: 'http://127.0.0.1:9/',
      max_retries: 1,
      timeout_ms: 60_000,
    });
    expect(config.providers['openai']?.keys[0]).toMatchObject({ weight: 2, models: [] });
  });

  it('reads the same gateway from a YAML file', async () => {
    const jsonPath = await file('same.json', JSON.stringify(document));
    for (const name of ['gateway.yaml', 'gateway.yml']) {
      const yamlPath = await file(name, yamlDocument);
      expect(await loadGatewayConfig(yamlPath, env)).toEqual(await loadGatewayConfig(jsonPath, env));
    }
  });

  it('resolves env.NAME references, keeping provider key values as references', async () => {
    const config = parseGatewayConfig(document, env);
    // Provider keys are resolved at use, so that stores and the admin API never hold the secret itself.
    expect(config.providers['openai']?.keys[0]?.value).toBe('env.TEST_OPENAI_KEY');
    expect(config.providers['openai']?.network_config.base_url).toBe('http://127.0.0.1:9/');
    expect(config.governance.virtual_keys[0]?.value).toBe('sk-gw-from-the-environment');
    // Only a whole value is a reference.
    const literal = parseGatewayConfig(
      { providers: { openai: { keys: [{ value: 'sk-env.TEST_OPENAI_KEY' }] } } },
      env,
    );
    expect(literal.providers['openai']?.keys[0]?.value).toBe('sk-env.TEST_OPENAI_KEY');
  });

  it('without GATEWAY_CONFIG, answers the defaults', async () => {
    const config = await loadGatewayConfig(undefined, {});
    expect(config.providers).toEqual({});
    expect(config.client.max_request_body_bytes).toBe(10 * 1024 * 1024);
  });

  it('names the field whose environment variable is missing', async () => {
    const path = await file('missing-env.json', JSON.stringify(document));
    const { TEST_OPENAI_KEY: _unset, ...partial } = env;
    const error = await loadError(path, partial);
    expect(error).toBeInstanceOf(ConfigError);
    expect(error.message).toContain('providers.openai.keys[0].value');
    expect(error.message).toContain('TEST_OPENAI_KEY');

    const { TEST_UPSTREAM_URL: _alsoUnset, ...withoutUrl } = env;
    const urlError = await loadError(path, withoutUrl);
    expect(urlError.message).toContain('providers.openai.network_config.base_url');
  });

  it.each([
    ['client.max_request_body_bytes', { client: { max_request_body_bytes: 'big' } }],
    [
      'providers.openai.network_config.max_retries',
      { providers: { openai: { network_config: { max_retries: 'x' } } } },
    ],
    [
      'providers.openai.network_config.base_url',
      { providers: { openai: { network_config: { base_url: 'not a url' } } } },
    ],
    [
      'providers.openai.keys[1].weight',
      { providers: { openai: { keys: [{ value: 'a' }, { value: 'b', weight: -1 }] } } },
    ],
    ['client.required_headers', { client: { required_headers: 'x-team' } }],
    ['governance.virtual_keys[0].name', { governance: { virtual_keys: [{ value: 'sk-gw-x' }] } }],
    ['mcp.clients[0].connection_string', { mcp: { clients: [{ name: 'tools', connection_type: 'http' }] } }],
    [
      'guardrails.rules[0].input_profiles[0]',
      { guardrails: { rules: [{ id: 'r', input_profiles: ['missing'] }] } },
    ],
    [
      'guardrails.profiles[0].patterns[0].regex',
      { guardrails: { profiles: [{ id: 'p', type: 'builtin', patterns: [{ name: 'x', regex: '(' }] }] } },
    ],
    [
      'guardrails.profiles[0].region',
      { guardrails: { profiles: [{ id: 'b', type: 'bedrock', guardrail_id: 'g' }] } },
    ],
  ])('names the field of a wrong value: %s', async (field, bad) => {
    const path = await file(`bad-${field.replace(/[^a-z]/gi, '-')}.json`, JSON.stringify(bad));
    const error = await loadError(path);
    expect(error).toBeInstanceOf(ConfigError);
    expect(error.message).toContain(field);
  });

  it('names an unknown field', async () => {
    const path = await file('typo.yaml', 'client:\n  enforce_virtal_keys: true\n');
    const error = await loadError(path);
    expect(error.message).toContain('client');
    expect(error.message).toContain('enforce_virtal_keys');
  });

  it.each([
    ['governance.budgets', 'governance:\n  budgets:\n    - { max_limit: 10, reset_duration: 1M }\n'],
    [
      'providers.openai.network_config.max_connections',
      'providers:\n  openai:\n    network_config: { max_connections: 64 }\n',
    ],
  ])('refuses %s, a section gw does not act on yet', async (field, yaml) => {
    const path = await file(`inert-${field.replace(/[^a-z]/gi, '-')}.yaml`, yaml);
    const error = await loadError(path);
    expect(error).toBeInstanceOf(ConfigError);
    expect(error.message).toContain(`${field}: is not supported yet`);
  });

  it('has tracing off by default, and names a bad tracing field', () => {
    expect(parseGatewayConfig({}).tracing).toMatchObject({
      enabled: false,
      sampling_ratio: 1,
      include_content: false,
      service_name_prefix: 'gw-',
      max_queue_size: 2048,
    });
    expect(() => parseGatewayConfig({ tracing: { sampling_ratio: 1.5 } })).toThrow('tracing.sampling_ratio');
    expect(() => parseGatewayConfig({ tracing: { endpoint: 'collector:4318' } })).toThrow('tracing.endpoint');
    expect(() => parseGatewayConfig({ tracing: { max_queue_size: 10, max_export_batch_size: 20 } })).toThrow(
      'tracing.max_export_batch_size',
    );
    // A collector's token is a secret written `env.NAME`.
    const config = parseGatewayConfig(
      { tracing: { headers: { authorization: 'env.COLLECTOR_TOKEN' } } },
      { COLLECTOR_TOKEN: 'Bearer t' },
    );
    expect(config.tracing.headers).toEqual({ authorization: 'Bearer t' });
  });

  it('accepts max_connections: 256, what provider configs stored by earlier builds carry', () => {
    const config = parseGatewayConfig({
      providers: { openai: { network_config: { max_connections: 256 } } },
    });
    expect(config.providers['openai']?.network_config.max_connections).toBe(256);
  });

  it('names the file when it cannot be read or parsed', async () => {
    const missing = join(directory, 'does-not-exist.yaml');
    const unreadable = await loadError(missing);
    expect(unreadable.message).toContain('GATEWAY_CONFIG');
    expect(unreadable.message).toContain(missing);

    const brokenJson = await file('broken.json', '{"providers": ');
    expect((await loadError(brokenJson)).message).toMatch(/broken\.json.*JSON/);
    const brokenYaml = await file('broken.yaml', 'providers:\n  openai: [unclosed\n');
    expect((await loadError(brokenYaml)).message).toMatch(/broken\.yaml.*YAML/);
  });
});

describe('environment schemas', () => {
  const ingress = (GW_ROUTER_ADDR: string) =>
    readEnvironment(ingressEnvironmentSchema, {
      GW_ROUTER_ADDR,
      GW_GOVERNANCE_ADDR: 'governance:7201',
      GW_CLUSTER_TOKEN: CLUSTER_TOKEN,
    });

  it.each([
    'router:7101',
    '10.0.0.7:7101',
    '[::1]:7101',
    '127.0.0.1:7101,127.0.0.1:7102',
    'dns:///gw-router.gw.svc.cluster.local:7101',
  ])('takes the service address %s', (address) => {
    expect(ingress(address).GW_ROUTER_ADDR).toBe(address);
  });

  it.each([
    'router',
    'router:port',
    // A list is balanced over IPv4 addresses; names need one dns: address instead.
    'router-0:7101,router-1:7101',
    'http://router:7101',
  ])('refuses the service address %s', (address) => {
    expect(() => ingress(address)).toThrow(
      `GW_ROUTER_ADDR: '${address}' is not an address of the router service`,
    );
  });

  it('reads the OTLP endpoint variables: the traces URL as is, else the base URL with /v1/traces', () => {
    const read = (env: NodeJS.ProcessEnv) =>
      otlpTracesEndpoint(readEnvironment(routerEnvironmentSchema, env));
    const cluster = { GW_CLUSTER_TOKEN: 'a-cluster-token-for-tests' };
    expect(read(cluster)).toBeUndefined();
    expect(read({ ...cluster, OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/' })).toBe(
      'http://collector:4318/v1/traces',
    );
    expect(
      read({
        ...cluster,
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318',
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://traces:4318/custom',
      }),
    ).toBe('http://traces:4318/custom');
    expect(() => read({ ...cluster, OTEL_EXPORTER_OTLP_ENDPOINT: 'collector' })).toThrow(
      "OTEL_EXPORTER_OTLP_ENDPOINT: 'collector' is not an http(s) URL",
    );
  });

  it('applies the documented defaults; an empty value counts as unset', () => {
    expect(readEnvironment(embeddedEnvironmentSchema, { PORT: '', LOG_LEVEL: '' })).toEqual({
      PORT: 8080,
      GW_HOST: '127.0.0.1',
      LOG_LEVEL: 'info',
      GW_SHUTDOWN_TIMEOUT_MS: 25_000,
      GW_STARTUP_RETRY_MS: 60_000,
      GW_HEADERS_TIMEOUT_MS: 10_000,
      GW_REQUEST_TIMEOUT_MS: 120_000,
      GW_BODY_PROGRESS_MS: 10_000,
      GW_BODY_PROGRESS_BYTES: 1_024,
      GW_KEEP_ALIVE_TIMEOUT_MS: 65_000,
      GW_MAX_CONNECTIONS: 10_000,
      GATEWAY_DATA_DIR: './data',
    });
  });
});

/**
 * How long a gw process run here may take to start and stop, or to refuse and exit, on an idle machine (a
 * start that loads every module takes seconds; 11–13 s on a busy machine): past it, the safety kill. Stretched
 * by the time scale, as are the budgets of the tests that run them.
 */
const PROCESS_CEILING_MS = 15_000;
const PROCESS_TESTS = { timeout: scaled(2 * PROCESS_CEILING_MS) };

/** `node src/embedded.ts` as a child process, its output collected. */
function spawnEmbedded(environment: NodeJS.ProcessEnv) {
  const child = spawn(process.execPath, [EMBEDDED_ENTRY], {
    env: { ...process.env, GW_HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'info', ...environment },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const collect = (chunk: Buffer) => {
    output += chunk.toString('utf8');
  };
  child.stdout.on('data', collect);
  child.stderr.on('data', collect);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const killer = setTimeout(() => child.kill('SIGKILL'), scaled(PROCESS_CEILING_MS));
  void exited.then(() => clearTimeout(killer));
  return { child, exited, output: () => output };
}

async function startFails(environment: NodeJS.ProcessEnv): Promise<string> {
  const dataDir = await mkdtemp(join(directory, 'data-'));
  const run = spawnEmbedded({ GATEWAY_DATA_DIR: dataDir, ...environment });
  const code = await run.exited;
  expect(code, run.output()).not.toBe(0);
  expect(code, 'it exits by itself, not by the safety kill').not.toBeNull();
  return run.output();
}

describe('node src/embedded.ts start-up', PROCESS_TESTS, () => {
  it('exits non-zero naming the field of an invalid config', async () => {
    const path = await file('invalid-start.yaml', 'client:\n  max_request_body_bytes: lots\n');
    expect(await startFails({ GATEWAY_CONFIG: path })).toContain('client.max_request_body_bytes');
  });

  it('exits non-zero naming the field whose environment variable is missing', async () => {
    const path = await file('missing-start.json', JSON.stringify(document));
    const { TEST_OPENAI_KEY: _unset, ...partial } = env;
    expect(await startFails({ GATEWAY_CONFIG: path, ...partial })).toContain(
      'providers.openai.keys[0].value',
    );
  });

  it('exits non-zero naming a provider the build cannot serve', async () => {
    const path = await file(
      'custom-without-base.json',
      JSON.stringify({ providers: { mycorp: { keys: [] } } }),
    );
    expect(await startFails({ GATEWAY_CONFIG: path })).toContain('mycorp');
  });

  it('serves /health with a valid config and exits 0 on SIGTERM', async () => {
    const path = await file('valid-start.yaml', 'providers:\n  openai:\n    keys: [{ value: sk-test }]\n');
    const dataDir = await mkdtemp(join(directory, 'data-'));
    const run = spawnEmbedded({ GATEWAY_CONFIG: path, GATEWAY_DATA_DIR: dataDir });
    const line = await waitFor(
      () =>
        run
          .output()
          .split('\n')
          .find((text) => text.includes('gw listening')),
      {
        timeoutMs: 10_000,
        what: 'gw listening',
      },
    );
    const { port } = JSON.parse(line) as { port: number };
    expect(port).toBeGreaterThan(0);
    const health = await fetch(`http://127.0.0.1:${port}/health`, {
      signal: AbortSignal.timeout(scaled(5_000)),
    });
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ status: 'ok' });
    run.child.kill('SIGTERM');
    expect(await run.exited).toBe(0);
  });
});

// Starting a cluster is what startCluster's own ceiling (50 s, stretched) measures.
describe('node src/cluster.ts start-up', { timeout: scaled(60_000) }, () => {
  it('fails naming the field of an invalid config, and stops every service', async () => {
    const config = { client: { max_request_body_bytes: 'lots' } } as unknown as GatewayConfigInput;
    await expect(startCluster({ config, readyTimeoutMs: 45_000 })).rejects.toThrow(
      /exited during start-up[\s\S]*client\.max_request_body_bytes/,
    );
  });

  it('runs every service with a bounded heap, and leaves a flag NODE_OPTIONS names to it', async () => {
    const cluster = await startCluster({ config: {}, env: { NODE_OPTIONS: '--max-semi-space-size=0' } });
    try {
      const ports = [
        Number(new URL(cluster.urls[0]!).port),
        Number(new URL(cluster.adminUrl).port),
        cluster.ports.router[0]!,
        cluster.ports.governance[0]!,
      ];
      for (const port of ports) {
        const pid = await listenerPid(port);
        const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
        expect(argv.slice(1, -2)).toEqual(['--max-old-space-size=512']);
        expect(argv.at(-2)).toMatch(/services\/[a-z-]+\/src\/main\.ts$/);
      }
    } finally {
      await cluster.close();
    }
  });
});

const CLUSTER_TOKEN = 'config-test-cluster-token-0123456789';

/** The entry point of every process gw runs, by the name its refusal line carries. */
const ENTRIES: Record<string, string> = {
  gateway: '../src/embedded.ts',
  cluster: '../src/cluster.ts',
  ingress: '../services/ingress/src/main.ts',
  router: '../services/router/src/main.ts',
  governance: '../services/governance/src/main.ts',
  admin: '../services/admin/src/main.ts',
  'mcp-runner': '../services/mcp-runner/src/main.ts',
};

/** An entry point run with exactly this environment (and PATH); what it wrote and how it ended. */
async function runEntry(entry: string, environment: Record<string, string>) {
  const child = spawn(process.execPath, [entry], {
    env: { PATH: process.env['PATH'], ...environment },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const killer = setTimeout(() => child.kill('SIGKILL'), scaled(PROCESS_CEILING_MS));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  clearTimeout(killer);
  return { code, stdout, stderr };
}

describe('every process refuses a missing or bad configuration with the same one line', PROCESS_TESTS, () => {
  const entry = (process: string) => fileURLToPath(new URL(ENTRIES[process]!, import.meta.url));
  const cluster = {
    GW_ROUTER_ADDR: '127.0.0.1:1',
    GW_GOVERNANCE_ADDR: '127.0.0.1:2',
    GW_CLUSTER_TOKEN: CLUSTER_TOKEN,
  };

  it.each<[string, Record<string, string>, string]>([
    ['ingress', {}, 'GW_ROUTER_ADDR: is not set: the address of the router service (host:port)'],
    ['ingress', { ...cluster, GW_ROUTER_ADDR: '' }, 'GW_ROUTER_ADDR: is not set'],
    [
      'ingress',
      { ...cluster, GW_GOVERNANCE_ADDR: 'governance' },
      "GW_GOVERNANCE_ADDR: 'governance' is not an address",
    ],
    ['ingress', { ...cluster, PORT: 'eighty' }, "PORT: 'eighty' is not a port number"],
    ['router', { GW_ROUTER_PORT: '70000' }, "GW_ROUTER_PORT: '70000' is not a port number"],
    [
      'router',
      {},
      "GW_CLUSTER_TOKEN: is not set: the shared secret of the cluster's gRPC calls (openssl rand -hex 32)",
    ],
    ['governance', { GW_CLUSTER_TOKEN: 'short' }, 'GW_CLUSTER_TOKEN: is too short: use at least 16'],
    [
      'admin',
      { ...cluster, GW_GRPC_TLS_CA: '/etc/gw/ca.crt' },
      'GW_GRPC_TLS_CERT, GW_GRPC_TLS_KEY: is not set, and mutual TLS needs all of GW_GRPC_TLS_CA, _CERT, _KEY',
    ],
    ['router', { LOG_LEVEL: 'loud' }, "LOG_LEVEL: 'loud' is not a log level"],
    [
      'governance',
      { GATEWAY_CONFIG: '/does/not/exist.yaml', GW_CLUSTER_TOKEN: CLUSTER_TOKEN },
      'GATEWAY_CONFIG: cannot read /does/not/exist.yaml',
    ],
    [
      'governance',
      { GW_SHUTDOWN_TIMEOUT_MS: '-1' },
      "GW_SHUTDOWN_TIMEOUT_MS: '-1' is not a positive integer",
    ],
    ['admin', { GW_ROUTER_ADDR: '127.0.0.1:1' }, 'GW_GOVERNANCE_ADDR: is not set'],
    ['admin', { ...cluster, GW_METRICS_PORT: 'x' }, "GW_METRICS_PORT: 'x' is not a port number"],
    ['mcp-runner', {}, 'REDIS_URL: is not set: mcp-runner takes its jobs from BullMQ on Redis'],
    [
      'mcp-runner',
      { REDIS_URL: 'redis://127.0.0.1:6379', GW_MCP_CONCURRENCY: '0' },
      "GW_MCP_CONCURRENCY: '0' is not a positive integer",
    ],
    ['gateway', { PORT: '-1' }, "PORT: '-1' is not a port number"],
    ['cluster', {}, 'REDIS_URL: is not set: the cluster keeps its state in Redis'],
    [
      'cluster',
      { REDIS_URL: 'redis://127.0.0.1:6379', GW_ROUTER_REPLICAS: '100' },
      "GW_ROUTER_REPLICAS: '100' is not a replica count (0-64)",
    ],
  ])('%s with %j', async (process, environment, message) => {
    const run = await runEntry(entry(process), environment);
    expect(run.code, run.stderr).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(/^[^\n]+\n$/);
    expect(run.stderr).toContain(`gw-${process} cannot start: ${message}`);
  });

  it.each(['ingress', 'router', 'governance', 'admin', 'mcp-runner', 'gateway'])(
    '%s refuses an invalid config file naming the field',
    async (process) => {
      const path = await file(`refused-by-${process}.yaml`, 'client:\n  max_request_body_bytes: lots\n');
      const run = await runEntry(entry(process), {
        ...cluster,
        REDIS_URL: 'redis://127.0.0.1:6379',
        GATEWAY_CONFIG: path,
      });
      expect(run.code, run.stderr).toBe(1);
      expect(run.stdout).toBe('');
      expect(run.stderr).toBe(
        `gw-${process} cannot start: invalid gateway config: client.max_request_body_bytes: Invalid input: expected number, received string\n`,
      );
    },
  );

  it('refuses a guardrail rule whose CEL condition does not compile, naming it', async () => {
    const path = await file(
      'bad-condition.yaml',
      [
        'guardrails:',
        '  profiles: [{ id: pii, type: builtin, pii: [email] }]',
        '  rules: [{ id: r, condition: \'tem == "a"\', input_profiles: [pii] }]',
        '',
      ].join('\n'),
    );
    const dataDir = await mkdtemp(join(directory, 'data-'));
    const run = await runEntry(entry('gateway'), { GATEWAY_CONFIG: path, GATEWAY_DATA_DIR: dataDir });
    expect(run.code, run.stderr).toBe(1);
    expect(run.stderr).toBe(
      'gw-gateway cannot start: guardrails.rules[0].condition: Unknown variable: tem (line 1, column 1)\n',
    );
  });

  it('never repeats the value of a secret variable', async () => {
    const run = await runEntry(entry('ingress'), { ...cluster, REDIS_URL: 'http://user:hunter2@redis:6379' });
    expect(run.stderr).toBe(
      'gw-ingress cannot start: REDIS_URL: is not a redis://, rediss://, redis+cluster:// or redis+sentinel:// URL\n',
    );
  });

  it.each(['ingress', 'admin'])(
    '%s refuses a cache without Redis in one line, without a stack',
    async (process) => {
      const path = await file(
        `cache-without-redis-${process}.yaml`,
        'cache:\n  enabled: true\n  types: [exact]\n',
      );
      const run = await runEntry(entry(process), { ...cluster, GATEWAY_CONFIG: path });
      expect(run.code, run.stderr).toBe(1);
      expect(run.stderr).toBe(
        `gw-${process} cannot start: cache.enabled: a cluster keeps cache entries in Redis, and REDIS_URL is not set\n`,
      );
    },
  );

  it('refuses a corrupt store file (embedded) in one line, without a stack', async () => {
    const dataDir = await mkdtemp(join(directory, 'data-'));
    await writeFile(join(dataDir, 'store.json'), '{ not json');
    const run = await runEntry(entry('gateway'), {
      GW_HOST: '127.0.0.1',
      PORT: '0',
      GATEWAY_DATA_DIR: dataDir,
    });
    expect(run.code, run.stderr).toBe(1);
    expect(run.stderr).toMatch(/^gw-gateway cannot start: The gw store file .* is corrupt \(.*\n$/);
    expect(run.stderr).not.toContain('    at ');
  });

  it('says what the system refused, in one line (a port in use)', async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const { port } = taken.address() as AddressInfo;
    const dataDir = await mkdtemp(join(directory, 'data-'));
    const run = await runEntry(entry('gateway'), {
      GW_HOST: '127.0.0.1',
      PORT: String(port),
      GATEWAY_DATA_DIR: dataDir,
    });
    taken.close();
    expect(run.code).toBe(1);
    expect(run.stderr).toBe(
      `gw-gateway cannot start: listen EADDRINUSE: address already in use 127.0.0.1:${port}\n`,
    );
  });
});

describe('deploy/k8s environments', () => {
  const SCHEMAS = {
    ingress: ingressEnvironmentSchema,
    router: routerEnvironmentSchema,
    governance: governanceEnvironmentSchema,
    admin: adminEnvironmentSchema,
    'mcp-runner': mcpRunnerEnvironmentSchema,
  } as const;
  const directory = fileURLToPath(new URL('../deploy/k8s/base/', import.meta.url));
  // biome-ignore lint/suspicious/noExplicitAny: manifests are plain YAML documents
  const manifests: any[] = readdirSync(directory)
    .filter((name) => name.endsWith('.yaml') && name !== 'kustomization.yaml')
    .flatMap((name) =>
      parseAllDocuments(readFileSync(join(directory, name), 'utf8')).map((doc) => doc.toJS()),
    );
  const named = (kind: string, name: string) =>
    manifests.find((manifest) => manifest.kind === kind && manifest.metadata.name === name);

  it.each(Object.keys(SCHEMAS) as Array<keyof typeof SCHEMAS>)(
    '%s: its Deployment sets only variables it reads, and they pass its schema',
    (service) => {
      const deployment = named('Deployment', `gw-${service}`);
      const container = deployment.spec.template.spec.containers[0];
      expect(container.args).toEqual(['node', `services/${service}/src/main.ts`]);
      const own: Array<{
        name: string;
        value?: string;
        valueFrom?: { secretKeyRef?: { name: string; key: string } };
      }> = container.env ?? [];
      const schema = SCHEMAS[service];
      for (const { name } of own) expect(Object.keys(schema.shape), name).toContain(name);
      // A value from a Secret is the Secret's (placeholder) value, as the kubelet would set it.
      const deployedValue = (variable: (typeof own)[number]) => {
        const reference = variable.valueFrom?.secretKeyRef;
        if (!reference) return variable.value;
        const secret = named('Secret', reference.name);
        expect(secret, `Secret ${reference.name}`).toBeDefined();
        return secret.stringData?.[reference.key];
      };
      const environment = {
        ...named('ConfigMap', 'gw-env').data,
        ...named('Secret', 'gw-secrets').stringData,
        ...Object.fromEntries(own.map((variable) => [variable.name, deployedValue(variable)])),
      };
      expect(() => readEnvironment(schema, environment)).not.toThrow();
    },
  );
});
