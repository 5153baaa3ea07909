// The config file contract of DESIGN.md §5: GATEWAY_CONFIG (JSON or YAML), `env.NAME` secrets, and a
// start-up failure that names the field.
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ConfigError, loadGatewayConfig, parseGatewayConfig } from '@gw/shared';
import { type GatewayConfigInput, startCluster, waitFor } from '@gw/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

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
async function loadError(env: NodeJS.ProcessEnv): Promise<Error> {
  try {
    await loadGatewayConfig(env);
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
    const config = await loadGatewayConfig({ ...env, GATEWAY_CONFIG: path });
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
      expect(await loadGatewayConfig({ ...env, GATEWAY_CONFIG: yamlPath })).toEqual(
        await loadGatewayConfig({ ...env, GATEWAY_CONFIG: jsonPath }),
      );
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
    const config = await loadGatewayConfig({});
    expect(config.providers).toEqual({});
    expect(config.client.max_request_body_bytes).toBe(10 * 1024 * 1024);
  });

  it('names the field whose environment variable is missing', async () => {
    const path = await file('missing-env.json', JSON.stringify(document));
    const { TEST_OPENAI_KEY: _unset, ...partial } = env;
    const error = await loadError({ ...partial, GATEWAY_CONFIG: path });
    expect(error).toBeInstanceOf(ConfigError);
    expect(error.message).toContain('providers.openai.keys[0].value');
    expect(error.message).toContain('TEST_OPENAI_KEY');

    const { TEST_UPSTREAM_URL: _alsoUnset, ...withoutUrl } = env;
    const urlError = await loadError({ ...withoutUrl, GATEWAY_CONFIG: path });
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
  ])('names the field of a wrong value: %s', async (field, bad) => {
    const path = await file(`bad-${field.replace(/[^a-z]/gi, '-')}.json`, JSON.stringify(bad));
    const error = await loadError({ GATEWAY_CONFIG: path });
    expect(error).toBeInstanceOf(ConfigError);
    expect(error.message).toContain(field);
  });

  it('names an unknown field', async () => {
    const path = await file('typo.yaml', 'client:\n  enforce_virtal_keys: true\n');
    const error = await loadError({ GATEWAY_CONFIG: path });
    expect(error.message).toContain('client');
    expect(error.message).toContain('enforce_virtal_keys');
  });

  it.each([
    ['guardrails', 'guardrails:\n  rules: []\n'],
    ['governance.budgets', 'governance:\n  budgets:\n    - { max_limit: 10, reset_duration: 1M }\n'],
  ])('refuses %s, a section gw does not act on yet', async (field, yaml) => {
    const path = await file(`inert-${field.replace(/[^a-z]/gi, '-')}.yaml`, yaml);
    const error = await loadError({ GATEWAY_CONFIG: path });
    expect(error).toBeInstanceOf(ConfigError);
    expect(error.message).toContain(`${field}: is not supported yet`);
  });

  it('names the file when it cannot be read or parsed', async () => {
    const missing = join(directory, 'does-not-exist.yaml');
    const unreadable = await loadError({ GATEWAY_CONFIG: missing });
    expect(unreadable.message).toContain('GATEWAY_CONFIG');
    expect(unreadable.message).toContain(missing);

    const brokenJson = await file('broken.json', '{"providers": ');
    expect((await loadError({ GATEWAY_CONFIG: brokenJson })).message).toMatch(/broken\.json.*JSON/);
    const brokenYaml = await file('broken.yaml', 'providers:\n  openai: [unclosed\n');
    expect((await loadError({ GATEWAY_CONFIG: brokenYaml })).message).toMatch(/broken\.yaml.*YAML/);
  });
});

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
  const killer = setTimeout(() => child.kill('SIGKILL'), 15_000);
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

describe('node src/embedded.ts start-up', () => {
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
    const health = await fetch(`http://127.0.0.1:${port}/health`, { signal: AbortSignal.timeout(5_000) });
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ status: 'ok' });
    run.child.kill('SIGTERM');
    expect(await run.exited).toBe(0);
  });
});

describe('node src/cluster.ts start-up', () => {
  it('fails naming the field of an invalid config, and stops every service', async () => {
    const config = { client: { max_request_body_bytes: 'lots' } } as unknown as GatewayConfigInput;
    await expect(startCluster({ config, readyTimeoutMs: 15_000 })).rejects.toThrow(
      /exited during start-up[\s\S]*client\.max_request_body_bytes/,
    );
  });
});

describe('every service main refuses a bad environment with one line', () => {
  const main = (service: string) =>
    fileURLToPath(new URL(`../services/${service}/src/main.ts`, import.meta.url));

  it.each([
    ['ingress', {}, 'GW_ROUTER_ADDR: is not set'],
    [
      'ingress',
      { GW_ROUTER_ADDR: 'a:1', GW_GOVERNANCE_ADDR: 'b:1', PORT: 'eighty' },
      "PORT: 'eighty' is not a port number",
    ],
    ['router', { GW_ROUTER_PORT: '70000' }, "GW_ROUTER_PORT: '70000' is not a port number"],
    [
      'governance',
      { GATEWAY_CONFIG: '/does/not/exist.yaml' },
      'GATEWAY_CONFIG: cannot read /does/not/exist.yaml',
    ],
    ['admin', { GW_ROUTER_ADDR: 'a:1' }, 'GW_GOVERNANCE_ADDR: is not set'],
    ['mcp-runner', {}, 'REDIS_URL: is not set'],
  ])('%s with %j', async (service, environment, message) => {
    const child = spawn(process.execPath, [main(service)], {
      env: { PATH: process.env['PATH'], ...environment },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    expect(code, output).toBe(1);
    const lines = output.trim().split('\n');
    expect(lines, output).toHaveLength(1);
    expect(JSON.parse(lines[0]!)).toMatchObject({ level: 60, msg: expect.stringContaining(message) });
  });
});
