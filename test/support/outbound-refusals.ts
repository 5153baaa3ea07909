// Runs inside a loopback-only network namespace with its own mount namespace (`unshare -rnm`, started by
// test/outbound-address.test.ts): it refuses to run anywhere else. There it puts the metadata and private
// addresses on `lo`, where a canary server listens on them, maps test names in its own /etc/hosts, starts a
// gateway (embedded in this process, or a cluster against a redis-server of this namespace), hands every caller
// hostile URLs, and prints one JSON report. A gateway that wrongly dials an address reaches the canary, never
// the machine's network: nothing here can leave the namespace.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { readlinkSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { type AddressInfo, connect } from 'node:net';
import { networkInterfaces, tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  freePort,
  type GatewayConfigInput,
  type LaunchedGateway,
  pauseForNegativeCheck,
  scaled,
  startCluster,
  startEmbedded,
  waitFor,
} from '@gw/testkit';

const mode = process.argv[2];
if (mode !== 'embedded' && mode !== 'cluster')
  throw new Error('usage: outbound-refusals.ts embedded|cluster');

// --- isolation first: nothing below may touch the machine's own network or files ------------------------------
const outside = process.env['GW_OUTSIDE_NAMESPACES'];
const inside = `${readlinkSync('/proc/self/ns/net')} ${readlinkSync('/proc/self/ns/mnt')}`;
const [outsideNet, outsideMount] = (outside ?? '').split(' ');
const [insideNet, insideMount] = inside.split(' ');
if (!outside || insideNet === outsideNet || insideMount === outsideMount) {
  throw new Error(
    `not in a network and mount namespace of its own (outside ${outside}, here ${inside}); refusing`,
  );
}
if (Object.keys(networkInterfaces()).some((name) => name !== 'lo')) {
  throw new Error(`interfaces other than lo exist here (${Object.keys(networkInterfaces())}); refusing`);
}

const ip = (...args: string[]) => execFileSync('ip', args, { stdio: 'pipe' });
ip('link', 'set', 'lo', 'up');
/** Where a wrong gateway would go: every one of them is on `lo` of this namespace, and the canary listens there. */
const TRAPS = ['169.254.169.254', '100.100.100.200', '10.0.0.1', '192.168.1.10', '198.51.100.7'];
for (const address of TRAPS) ip('addr', 'add', `${address}/32`, 'dev', 'lo');
ip('-6', 'addr', 'add', 'fd00:ec2::254/128', 'dev', 'lo');
ip('-6', 'addr', 'add', 'fc00::1/128', 'dev', 'lo');

const hostsFile = join(tmpdir(), `gw-outbound-hosts-${process.pid}`);
/** This namespace's /etc/hosts: `internal.test` is private; `rebind.test` public, until it is rewritten. */
const writeHosts = (rebindTo: string) =>
  writeFileSync(
    hostsFile,
    `127.0.0.1 localhost\n::1 localhost\n10.0.0.1 internal.test\n${rebindTo} rebind.test\n`,
  );
writeHosts('198.51.100.7');
execFileSync('mount', ['--bind', hostsFile, '/etc/hosts']);

// --- the canary and an internal service ------------------------------------------------------------------------
let canaryConnections = 0;
const canaries: Server[] = [];
async function listen(server: Server, port: number, host: string): Promise<number> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, resolve);
  });
  return (server.address() as AddressInfo).port;
}
function canary(): Server {
  const server = createServer((_request, response) => response.end('canary'));
  server.on('connection', () => {
    canaryConnections += 1;
  });
  canaries.push(server);
  return server;
}
// On every address of this namespace (`::` takes IPv4 too), on a port of its own and on 80.
const CANARY = await listen(canary(), 0, '::');
await listen(canary(), 80, '::');

const SECRET_BODY = 'internal-secret-body-7c1e9a';
let internalHits = 0;
const internal = createServer((_request, response) => {
  internalHits += 1;
  response.writeHead(500, { 'content-type': 'text/plain' });
  response.end(`${SECRET_BODY}: what an internal service answers`);
});
const INTERNAL = await listen(internal, 0, '127.0.0.1');

// --- the gateway ---------------------------------------------------------------------------------------------
const ADMIN_TOKEN = 'outbound-admin-token';
const ADMIN = { authorization: `Bearer ${ADMIN_TOKEN}` };
const config: GatewayConfigInput = {
  providers: {
    openai: {
      keys: [{ value: 'sk-outbound-upstream-0000' }],
      network_config: { base_url: `http://internal.test:${CANARY}/v1`, max_retries: 0 },
    },
  },
  guardrails: {
    profiles: [{ id: 'cfg-hook', type: 'webhook', url: `http://internal.test:${CANARY}/check` }],
    rules: [{ id: 'cfg-all', input_profiles: ['cfg-hook'], on_failure: 'allow' }],
  },
  mcp: {
    clients: [
      {
        name: 'cfg-internal',
        connection_type: 'http',
        connection_string: `http://internal.test:${CANARY}/mcp`,
      },
    ],
  },
};

let redis: ChildProcess | undefined;
let gateway: LaunchedGateway | undefined;
async function startGateway(): Promise<LaunchedGateway> {
  if (mode === 'embedded') return startEmbedded({ config, adminToken: ADMIN_TOKEN });
  const port = await freePort();
  redis = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    { stdio: 'ignore' },
  );
  const url = `redis://127.0.0.1:${port}`;
  await waitFor(
    () =>
      new Promise<boolean>((resolve) => {
        const socket = connect({ port, host: '127.0.0.1' });
        socket.once('connect', () => {
          socket.destroy();
          resolve(true);
        });
        socket.once('error', () => resolve(false));
      }),
  );
  return startCluster({ config, adminToken: ADMIN_TOKEN, env: { REDIS_URL: url }, readyTimeoutMs: 90_000 });
}

// biome-ignore lint/suspicious/noExplicitAny: answers are read field by field
type Json = any;

async function call(method: string, url: string, body?: unknown, headers: Record<string, string> = ADMIN) {
  const response = await fetch(url, {
    method,
    headers: { 'content-type': 'application/json', ...headers },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    signal: AbortSignal.timeout(scaled(20_000)),
  });
  const text = await response.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = text;
  }
  return { status: response.status, body: json as Json };
}

// Every form of an address gw must refuse by default, each on the canary's port.
const HOSTILE = [
  `http://169.254.169.254:${CANARY}/latest/meta-data/`,
  `http://[::ffff:169.254.169.254]:${CANARY}/`,
  `http://[::ffff:a9fe:a9fe]:${CANARY}/`,
  `http://0xa9fea9fe:${CANARY}/`,
  `http://2852039166:${CANARY}/`,
  `http://169.254.43518:${CANARY}/`,
  `http://0251.0376.0251.0376:${CANARY}/`,
  `http://0xa9.0xfe.0xa9.0xfe:${CANARY}/`,
  `http://169.254.169.254/`,
  `http://metadata.google.internal:${CANARY}/computeMetadata/v1/`,
  `http://metadata.google.internal./computeMetadata/v1/`,
  `http://metadata/`,
  `http://[fd00:ec2::254]:${CANARY}/`,
  `http://100.100.100.200:${CANARY}/`,
  `http://10.0.0.1:${CANARY}/`,
  `http://192.168.1.10:${CANARY}/`,
  `http://[fc00::1]:${CANARY}/`,
  `http://internal.test:${CANARY}/`,
  `http://0.0.0.0:${CANARY}/`,
  `http://[::]:${CANARY}/`,
];

/** Each caller's write of one URL through the admin API. */
const WRITES: Record<string, (url: string, index: number) => Promise<{ status: number; body: Json }>> = {
  provider: (url, index) =>
    call('POST', `${gateway!.adminUrl}/api/providers`, {
      name: `evil-${index}`,
      keys: [{ value: 'sk-plain-value-0000' }],
      custom_provider_config: { base_provider: 'openai' },
      network_config: { base_url: url },
    }),
  mcp: (url, index) =>
    call('POST', `${gateway!.adminUrl}/api/mcp/client`, {
      name: `evil-${index}`,
      connection_type: index % 2 ? 'sse' : 'http',
      connection_string: url,
    }),
  alert_webhook: (url, index) =>
    call('POST', `${gateway!.adminUrl}/api/alerts/channels`, {
      id: `evil-${index}`,
      type: 'webhook',
      url,
      secret: 'whsec-0123456789abcdef',
    }),
  alert_slack: (url, index) =>
    call('POST', `${gateway!.adminUrl}/api/alerts/channels`, {
      id: `evil-slack-${index}`,
      type: 'slack',
      url,
    }),
  guardrail_webhook: (url, index) =>
    call('POST', `${gateway!.adminUrl}/api/guardrails/profiles`, {
      id: `evil-${index}`,
      type: 'webhook',
      url,
    }),
  guardrail_azure: (url, index) =>
    call('POST', `${gateway!.adminUrl}/api/guardrails/profiles`, {
      id: `evil-azure-${index}`,
      type: 'azure_content_safety',
      endpoint: url,
      api_key: 'plain-azure-key-0000',
    }),
};

const report: Record<string, unknown> = { mode, namespaces: inside };
try {
  gateway = await startGateway();
  const admin = `${gateway.adminUrl}/api`;

  // 1. Every caller refuses every hostile form when it is written.
  const writes: Array<{ caller: string; url: string; status: number; message: string }> = [];
  for (const [caller, write] of Object.entries(WRITES)) {
    for (const [index, url] of HOSTILE.entries()) {
      const answer = await write(url, index);
      writes.push({ caller, url, status: answer.status, message: String(answer.body?.error?.message ?? '') });
    }
  }
  report['writes'] = writes;
  // The email channel's SMTP host is an address too.
  report['alert_email'] = await call('POST', `${admin}/alerts/channels`, {
    id: 'evil-mail',
    type: 'email',
    host: '0xa9fea9fe',
    port: CANARY,
    from: 'gw@example.com',
    to: ['ops@example.com'],
  });

  // 2. A Developer (mcp:write without mcp:remote) adds no http or sse client, even at a loopback address.
  const team = await call('POST', `${admin}/governance/teams`, { name: 'outbound-team' });
  const user = await call('POST', `${admin}/users`, {
    email: 'dev@example.com',
    name: 'Dev',
    role: 'developer',
    team_ids: [team.body.id],
  });
  const token = await call('POST', `${admin}/tokens`, {
    name: 'dev',
    role: 'developer',
    user_id: user.body.id,
  });
  const developer = { authorization: `Bearer ${token.body.token}` };
  report['developer_mcp'] = await call(
    'POST',
    `${admin}/mcp/client`,
    { name: 'dev-remote', connection_type: 'http', connection_string: `http://127.0.0.1:${INTERNAL}/mcp` },
    developer,
  );

  // 3. No remote body read back: an Admin's client at an internal service (loopback is allowed by default).
  const added = await call('POST', `${admin}/mcp/client`, {
    name: 'internal-service',
    connection_type: 'http',
    connection_string: `http://127.0.0.1:${INTERNAL}/mcp`,
  });
  await waitFor(
    async () => (await call('GET', `${admin}/mcp/client/internal-service`)).body?.state === 'error',
    { timeoutMs: 20_000 },
  ).catch(() => {});
  const shown = await call('GET', `${admin}/mcp/client/internal-service`);
  const channel = await call('POST', `${admin}/alerts/channels`, {
    id: 'internal-hook',
    type: 'webhook',
    url: `http://127.0.0.1:${INTERNAL}/hook`,
    secret: 'whsec-0123456789abcdef',
  });
  const sent = await call('POST', `${admin}/alerts/channels/internal-hook/test`);
  report['read_back'] = {
    add_status: added.status,
    add_error: added.body?.client?.error,
    get_error: shown.body?.error,
    get_runners: shown.body?.runners,
    channel_status: channel.status,
    test: sent.body,
    internal_hits: internalHits,
  };

  // 4. At connect time: the config file's own URLs on a name that resolves to a private address.
  await waitFor(async () => (await call('GET', `${admin}/mcp/client/cfg-internal`)).body?.state === 'error', {
    timeoutMs: 20_000,
  }).catch(() => {});
  report['config_mcp'] = (await call('GET', `${admin}/mcp/client/cfg-internal`)).body;
  report['config_provider'] = await call(
    'POST',
    `${gateway.url}/v1/chat/completions`,
    { model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] },
    {},
  );

  // 5. DNS rebinding: a name public when the channel is written, the metadata address when it sends.
  report['rebind_write'] = await call('POST', `${admin}/alerts/channels`, {
    id: 'rebind',
    type: 'webhook',
    url: `http://rebind.test:${CANARY}/hook`,
    secret: 'whsec-0123456789abcdef',
  });
  writeHosts('169.254.169.254');
  report['rebind_send'] = (await call('POST', `${admin}/alerts/channels/rebind/test`)).body;

  // Negative check: late connections (a runner retrying) would count too.
  await pauseForNegativeCheck(1_000);
  report['canary_connections'] = canaryConnections;
} catch (error) {
  report['failure'] = String((error as Error).stack ?? error);
  if (gateway && 'output' in gateway)
    report['output'] = (gateway as { output(): string }).output().slice(-4_000);
} finally {
  await gateway?.close().catch(() => {});
  redis?.kill('SIGKILL');
  for (const server of [...canaries, internal]) server.close();
  execFileSync('umount', ['/etc/hosts']);
}
process.stdout.write(`\nOUTBOUND-REPORT ${JSON.stringify(report)}\n`);
process.exit(0);
