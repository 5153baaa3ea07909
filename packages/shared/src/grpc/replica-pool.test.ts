// The gRPC ports of a cluster: only callers with the cluster token (and, with mutual TLS, a certificate of
// the cluster's CA) get in; a client's replica pool ejects a frozen replica after one deadline, readmits it
// once it answers health checks, follows a name's records as they change, and servers rotate connections
// past their maximum age. Frozen replicas are simulated by a proxy that stops forwarding bytes (pings too).
import { execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { type AddressInfo, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  Client,
  credentials,
  Metadata,
  type Server,
  type ServiceError,
  type sendUnaryData,
  status,
} from '@grpc/grpc-js';
import { type FreezableProxy, startFreezableProxy, TEST_GRPC_SECURITY, waitFor } from '@gw/testkit';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { loadService } from './grpc-channel.ts';
import { type GrpcSecurity, readGrpcSecurity, tokenInterceptor } from './grpc-security.ts';
import { startGrpcServer } from './grpc-server.ts';
import { neverSent, ReplicaPool } from './replica-pool.ts';

const json = {
  serialize: (value: unknown) => Buffer.from(JSON.stringify(value)),
  deserialize: (bytes: Buffer) => JSON.parse(bytes.toString('utf8')),
};
/** A test method: answers the replica's name after `delayMs`. */
const WHO = {
  path: '/gw.test.Echo/Who',
  requestStream: false,
  responseStream: false,
  requestSerialize: json.serialize,
  requestDeserialize: json.deserialize,
  responseSerialize: json.serialize,
  responseDeserialize: json.deserialize,
};

type Started = Awaited<ReturnType<typeof startGrpcServer>>;
const started: Array<{ close(deadlineMs: number): Promise<void> }> = [];

async function startReplica(
  name: string,
  options: { host?: string; port?: number; security?: GrpcSecurity; ageMs?: number } = {},
): Promise<Started> {
  const server = await startGrpcServer({
    port: options.port ?? 0,
    host: options.host ?? '127.0.0.1',
    security: options.security ?? TEST_GRPC_SECURITY,
    ...(options.ageMs && { maxConnectionAge: { ageMs: options.ageMs, graceMs: 5_000 } }),
    register: (grpc: Server) =>
      grpc.addService(
        { Who: WHO },
        {
          Who: (call: { request: { delayMs?: number } }, callback: sendUnaryData<{ name: string }>) => {
            setTimeout(() => callback(null, { name }), call.request.delayMs ?? 0);
          },
        },
      ),
  });
  started.push(server);
  return server;
}

function who(
  client: Client,
  options: { deadlineMs: number; delayMs?: number; signal?: AbortSignal },
): Promise<string> {
  return new Promise((resolve, reject) => {
    const call = client.makeUnaryRequest(
      WHO.path,
      WHO.requestSerialize,
      WHO.responseDeserialize,
      { delayMs: options.delayMs ?? 0 },
      { deadline: Date.now() + options.deadlineMs },
      (error: ServiceError | null, reply?: { name: string }) =>
        error ? reject(error) : resolve(reply!.name),
    );
    options.signal?.addEventListener('abort', () => call.cancel());
  });
}

/**
 * The pool's and the calls' deadline: short, so a frozen replica costs the test little, and long enough that a
 * replica answering on a machine busy starting clusters beside this test is not taken for a frozen one.
 */
const DEADLINE_MS = 800;

function pool(
  address: string,
  extra: {
    resolve?: (host: string) => Promise<string[]>;
    maxInFlightPerReplica?: number;
    deadlineMs?: number;
  } = {},
) {
  return new ReplicaPool<Client>({
    address,
    security: TEST_GRPC_SECURITY,
    deadlineMs: DEADLINE_MS,
    resolveIntervalMs: 200,
    create: (target, channelCredentials, options) => new Client(target, channelCredentials, options),
    ...extra,
  });
}

const pools: Array<ReplicaPool<Client>> = [];
const proxies: FreezableProxy[] = [];
afterEach(async () => {
  for (const each of pools.splice(0)) each.close();
  for (const proxy of proxies.splice(0)) await proxy.close();
});
afterAll(async () => {
  for (const server of started.splice(0)) await server.close(100);
});

describe('cluster token', () => {
  let port: number;
  beforeAll(async () => {
    port = (await startReplica('a')).port;
  });

  const callWith = (interceptors: ReturnType<typeof tokenInterceptor>[]) => {
    const client = new Client(`127.0.0.1:${port}`, credentials.createInsecure(), { interceptors });
    return who(client, { deadlineMs: 2_000 }).finally(() => client.close());
  };

  it('refuses a call without the token or with a wrong one, before the handler', async () => {
    await expect(callWith([])).rejects.toMatchObject({ code: status.UNAUTHENTICATED });
    const wrong = tokenInterceptor({ token: `${TEST_GRPC_SECURITY.token.slice(0, -1)}x` });
    await expect(callWith([wrong])).rejects.toMatchObject({
      code: status.UNAUTHENTICATED,
      details: expect.stringContaining('GW_CLUSTER_TOKEN'),
    });
    await expect(callWith([tokenInterceptor({ token: 'short' })])).rejects.toMatchObject({
      code: status.UNAUTHENTICATED,
    });
    await expect(callWith([tokenInterceptor(TEST_GRPC_SECURITY)])).resolves.toBe('a');
  });

  it('answers the standard health check to anyone (Kubernetes probes send no metadata)', async () => {
    const client = new Client(`127.0.0.1:${port}`, credentials.createInsecure());
    const check = loadService('health', 'Health').service['Check']!;
    const reply = await new Promise<{ status: string }>((resolve, reject) =>
      client.makeUnaryRequest(
        check.path,
        check.requestSerialize,
        check.responseDeserialize,
        { service: '' },
        new Metadata(),
        (error, value) => (error ? reject(error) : resolve(value as { status: string })),
      ),
    );
    client.close();
    expect(reply.status).toBe('SERVING');
  });
});

describe('mutual TLS', () => {
  /** A CA, a certificate it signs for 127.0.0.1, and the same from an unrelated CA. */
  function certificates(directory: string, name: string) {
    const run = (...args: string[]) => execFileSync('openssl', args, { cwd: directory, stdio: 'ignore' });
    run(
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-days',
      '1',
      '-subj',
      `/CN=${name}-ca`,
      '-keyout',
      `${name}-ca.key`,
      '-out',
      `${name}-ca.crt`,
    );
    run(
      'req',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-subj',
      '/CN=127.0.0.1',
      '-keyout',
      `${name}.key`,
      '-out',
      `${name}.csr`,
    );
    const extensions = join(directory, `${name}.ext`);
    execFileSync('sh', ['-c', `printf 'subjectAltName=IP:127.0.0.1\\n' > ${extensions}`]);
    run(
      'x509',
      '-req',
      '-in',
      `${name}.csr`,
      '-CA',
      `${name}-ca.crt`,
      '-CAkey',
      `${name}-ca.key`,
      '-CAcreateserial',
      '-days',
      '1',
      '-extfile',
      extensions,
      '-out',
      `${name}.crt`,
    );
    return {
      GW_CLUSTER_TOKEN: TEST_GRPC_SECURITY.token,
      GW_GRPC_TLS_CA: join(directory, `${name}-ca.crt`),
      GW_GRPC_TLS_CERT: join(directory, `${name}.crt`),
      GW_GRPC_TLS_KEY: join(directory, `${name}.key`),
    };
  }

  it('serves a client with a certificate of the cluster CA only', async () => {
    const directory = mkdtempSync(join(tmpdir(), 'gw-mtls-'));
    const cluster = await readGrpcSecurity(certificates(directory, 'cluster'));
    const stranger = await readGrpcSecurity(certificates(directory, 'stranger'));
    const server = await startReplica('tls', { security: cluster });
    const address = `127.0.0.1:${server.port}`;
    const trusted = new ReplicaPool<Client>({
      address,
      security: cluster,
      deadlineMs: 2_000,
      create: (target, channelCredentials, options) => new Client(target, channelCredentials, options),
    });
    pools.push(trusted);
    await expect(
      trusted.call((client) => who(client, { deadlineMs: 2_000 }), { retry: false }),
    ).resolves.toBe('tls');
    // A certificate of another CA (with the right token), and plain text, are refused by the handshake.
    const foreign = new ReplicaPool<Client>({
      address,
      security: { token: cluster.token, tls: { ...stranger.tls!, ca: cluster.tls!.ca } },
      deadlineMs: 500,
      create: (target, channelCredentials, options) => new Client(target, channelCredentials, options),
    });
    pools.push(foreign);
    await expect(
      foreign.call((client) => who(client, { deadlineMs: 500 }), { retry: false }),
    ).rejects.toMatchObject({ code: status.UNAVAILABLE });
    const plain = pool(address);
    pools.push(plain);
    await expect(
      plain.call((client) => who(client, { deadlineMs: 500 }), { retry: false }),
    ).rejects.toMatchObject({ code: status.UNAVAILABLE });
  });

  it('refuses to start with only part of the TLS files', async () => {
    await expect(
      readGrpcSecurity({ GW_CLUSTER_TOKEN: TEST_GRPC_SECURITY.token, GW_GRPC_TLS_CA: '/nonexistent/ca.crt' }),
    ).rejects.toThrow(/GW_GRPC_TLS_CERT, GW_GRPC_TLS_KEY: is not set/);
    await expect(
      readGrpcSecurity({
        GW_CLUSTER_TOKEN: TEST_GRPC_SECURITY.token,
        GW_GRPC_TLS_CA: '/nonexistent/ca.crt',
        GW_GRPC_TLS_CERT: '/nonexistent/c.crt',
        GW_GRPC_TLS_KEY: '/nonexistent/c.key',
      }),
    ).rejects.toThrow(/GW_GRPC_TLS_CA: cannot read/);
  });
});

describe('replica pool', () => {
  let proxyA: FreezableProxy;
  let proxyB: FreezableProxy;

  beforeAll(async () => {
    const [a, b] = await Promise.all([startReplica('a'), startReplica('b')]);
    proxyA = await startFreezableProxy({ host: '127.0.0.1', port: a.port });
    proxyB = await startFreezableProxy({ host: '127.0.0.1', port: b.port });
  });
  afterAll(async () => {
    await proxyA.close();
    await proxyB.close();
  });

  it('spreads calls, ejects a frozen replica after one deadline and readmits it when it answers again', async () => {
    const replicas = pool(`127.0.0.1:${proxyA.port},127.0.0.1:${proxyB.port}`);
    pools.push(replicas);
    const call = () => replicas.call((client) => who(client, { deadlineMs: DEADLINE_MS }), { retry: true });
    const spread = await Promise.all(Array.from({ length: 10 }, call));
    expect(new Set(spread)).toEqual(new Set(['a', 'b']));

    proxyA.freeze();
    const started = Date.now();
    const answers: string[] = [];
    for (let index = 0; index < 20; index++) answers.push(await call());
    const elapsed = Date.now() - started;
    // Every call is answered (by b); only the call that met the frozen replica paid its deadline, once.
    expect(answers).toEqual(Array(20).fill('b'));
    expect(elapsed).toBeLessThan(3 * DEADLINE_MS + 1_500);
    expect(replicas.state().find((replica) => replica.target.endsWith(`:${proxyA.port}`))?.healthy).toBe(
      false,
    );

    proxyA.thaw();
    await waitFor(() => replicas.state().every((replica) => replica.healthy), {
      timeoutMs: 10_000,
      what: 'the thawed replica readmitted',
    });
    const after = await Promise.all(Array.from({ length: 10 }, call));
    expect(new Set(after)).toEqual(new Set(['a', 'b']));
  });

  it('aborts a long call on a replica that freezes within about a deadline, not at its end', async () => {
    const replicas = pool(`127.0.0.1:${proxyA.port}`);
    pools.push(replicas);
    const picked = await replicas.connected();
    const watched = replicas.watch(picked.target);
    const started = Date.now();
    const longCall = who(picked.stub, { deadlineMs: 60_000, delayMs: 30_000, signal: watched.signal });
    setTimeout(() => proxyA.freeze(), 100);
    await expect(longCall).rejects.toMatchObject({ code: status.CANCELLED });
    expect(watched.faulted()).toBe(true);
    expect(Date.now() - started).toBeLessThan(10_000);
    watched.release();
    proxyA.thaw();
  });

  it('lets a long call finish on a replica that misses one health check and then answers again', async () => {
    // Checks every second with a 2 s deadline: a 3.5 s stall leaves exactly one check unanswered (one starts
    // within 1 s of the stall and goes silent; the next starts at least 2 s in and is answered at the thaw).
    const replicas = pool(`127.0.0.1:${proxyA.port}`, { deadlineMs: 2_000 });
    pools.push(replicas);
    const picked = await replicas.connected();
    const watched = replicas.watch(picked.target);
    const longCall = who(picked.stub, { deadlineMs: 60_000, delayMs: 5_000, signal: watched.signal });
    proxyA.freeze();
    await new Promise((resolve) => setTimeout(resolve, 3_500));
    // New calls went elsewhere meanwhile: the replica was ejected at its silent check.
    expect(replicas.state()[0]?.healthy).toBe(false);
    proxyA.thaw();
    await expect(longCall).resolves.toBe('a');
    expect(watched.faulted()).toBe(false);
    watched.release();
  }, 15_000);
});

describe('a replica that is starved, not frozen', () => {
  it('keeps the long calls of a replica that leaves health checks unanswered while its calls still hear from it', async () => {
    const replica = await startReplica('starved');
    const proxy = await startFreezableProxy({ host: '127.0.0.1', port: replica.port });
    proxies.push(proxy);
    const replicas = pool(`127.0.0.1:${proxy.port}`);
    pools.push(replicas);
    const picked = await replicas.connected();
    const watched = replicas.watch(picked.target);
    const longCall = who(picked.stub, {
      deadlineMs: 60_000,
      delayMs: 4 * DEADLINE_MS,
      signal: watched.signal,
    });
    // Its health checks go unanswered for several deadlines, while the call keeps hearing from it (as a lane
    // hears each message of a replica too busy to answer its checks in time).
    proxy.freeze();
    const hearing = setInterval(() => watched.heard(), DEADLINE_MS / 8);
    try {
      await waitFor(() => replicas.state()[0]?.healthy === false, { what: 'the silent replica ejected' });
      const silentSince = Date.now();
      await waitFor(() => Date.now() - silentSince > 3 * DEADLINE_MS, { what: 'three deadlines of silence' });
      expect(watched.faulted()).toBe(false);
    } finally {
      clearInterval(hearing);
      proxy.thaw();
    }
    await expect(longCall).resolves.toBe('starved');
    watched.release();
  });
});

describe('a replica that starts after its clients', () => {
  it('is connected within a deadline and a reconnect wait, however long it was down', async () => {
    // A port nothing listens on yet, as a router's while the ingress starts first.
    const port = await new Promise<number>((resolve) => {
      const probe = createServer().listen(0, '127.0.0.1', () => {
        const { port: free } = probe.address() as AddressInfo;
        probe.close(() => resolve(free));
      });
    });
    const replicas = pool(`127.0.0.1:${port}`, { deadlineMs: 1_000 });
    pools.push(replicas);
    // Down for six seconds: grpc-js's growing backoff would wait about four before its next attempt by then.
    await sleep(6_000);
    await startReplica('late', { port });
    await expect(
      replicas.call((client) => who(client, { deadlineMs: 1_000 }), { retry: false }),
    ).resolves.toBe('late');
  }, 20_000);

  it('marks a call it could not send as never sent', async () => {
    const replicas = pool('127.0.0.1:1', { deadlineMs: 200 });
    pools.push(replicas);
    const failure = await replicas.connected().catch((error: unknown) => error);
    expect(failure).toMatchObject({ code: status.UNAVAILABLE });
    expect(neverSent(failure)).toBe(true);
    expect(neverSent(Object.assign(new Error('lane broke'), { code: status.UNAVAILABLE }))).toBe(false);
  });
});

describe('a window of calls', () => {
  it('keeps a burst a replica serves one at a time within the deadline: at most the window on the wire', async () => {
    // A replica that works one call at a time, 20 ms each: 100 calls sent at once take 2 s, past the 1 s
    // deadline for the last ones; with a window of 4, no call spends more than ~80 ms on the wire.
    let busy = Promise.resolve();
    let onWire = 0;
    let mostOnWire = 0;
    const server = await startGrpcServer({
      port: 0,
      host: '127.0.0.1',
      security: TEST_GRPC_SECURITY,
      register: (grpc: Server) =>
        grpc.addService(
          { Who: WHO },
          {
            Who: (_call: unknown, callback: sendUnaryData<{ name: string }>) => {
              onWire++;
              mostOnWire = Math.max(mostOnWire, onWire);
              busy = busy.then(async () => {
                await new Promise((resolve) => setTimeout(resolve, 20));
                onWire--;
                callback(null, { name: 'serial' });
              });
            },
          },
        ),
    });
    started.push(server);
    const call = (replicas: ReplicaPool<Client>, deadlineMs: number) =>
      replicas.call((client) => who(client, { deadlineMs }), { retry: false });

    // Unbounded, 100 calls of 20 ms each on the wire at once: the last ones miss a 1 s deadline.
    const unbounded = pool(`127.0.0.1:${server.port}`);
    pools.push(unbounded);
    const flooded = await Promise.allSettled(Array.from({ length: 100 }, () => call(unbounded, 1_000)));
    expect(flooded.filter((result) => result.status === 'rejected').length).toBeGreaterThan(0);
    await busy;

    mostOnWire = 0;
    const windowed = pool(`127.0.0.1:${server.port}`, { maxInFlightPerReplica: 4 });
    pools.push(windowed);
    // Windowed, a call waits for its slot before its deadline starts: each is on the wire for about 4 × 20 ms,
    // far below the deadline even on a machine busy with other tests.
    const answers = await Promise.all(Array.from({ length: 100 }, () => call(windowed, 5_000)));
    expect(answers).toEqual(Array(100).fill('serial'));
    expect(mostOnWire).toBe(4);
  });
});

describe('a replica that drains', () => {
  it('finishes the calls it has, and gets no new ones', async () => {
    const [draining, staying] = [await startReplica('draining'), await startReplica('staying')];
    const replicas = pool(`127.0.0.1:${draining.port},127.0.0.1:${staying.port}`);
    pools.push(replicas);
    await waitFor(async () => (await replicas.connected()).target.endsWith(`:${draining.port}`), {
      what: 'the draining replica picked',
    });
    const picked = replicas.state().find((replica) => replica.target.endsWith(`:${draining.port}`))!;
    const connected = await replicas.connected();
    const stub = connected.target === picked.target ? connected.stub : (await replicas.connected()).stub;
    const watched = replicas.watch(picked.target);
    // A call that outlives several health checks of a replica that said NOT_SERVING all along.
    const longCall = who(stub, { deadlineMs: 10_000, delayMs: 1_500, signal: watched.signal });
    await new Promise((resolve) => setTimeout(resolve, 100));
    const closed = draining.close(10_000);
    await expect(longCall).resolves.toBe('draining');
    expect(watched.faulted()).toBe(false);
    watched.release();
    await closed;
    const after = await Promise.all(
      Array.from({ length: 6 }, () =>
        replicas.call((client) => who(client, { deadlineMs: 1_000 }), { retry: true }),
      ),
    );
    expect(new Set(after)).toEqual(new Set(['staying']));
  });
});

describe('a dns: address', () => {
  it('follows the records of the name: a replica added later gets its share', async () => {
    // Two replicas on one port of two loopback addresses, as a headless Service's records would be.
    const first = await startReplica('first', { host: '127.0.0.2' });
    await startReplica('second', { host: '127.0.0.3', port: first.port });
    let records = ['127.0.0.2'];
    const replicas = pool(`dns:///replicas.test:${first.port}`, { resolve: async () => records });
    pools.push(replicas);
    const call = () => replicas.call((client) => who(client, { deadlineMs: 1_000 }), { retry: true });
    await waitFor(() => replicas.state()[0]?.target === `127.0.0.2:${first.port}`, { what: 'first lookup' });
    expect(new Set(await Promise.all(Array.from({ length: 6 }, call)))).toEqual(new Set(['first']));

    records = ['127.0.0.2', '127.0.0.3'];
    await waitFor(() => replicas.state().length === 2, { what: 'the second record picked up' });
    expect(new Set(await Promise.all(Array.from({ length: 6 }, call)))).toEqual(new Set(['first', 'second']));

    records = ['127.0.0.3'];
    await waitFor(() => replicas.state().length === 1, { what: 'the first record dropped' });
    expect(new Set(await Promise.all(Array.from({ length: 4 }, call)))).toEqual(new Set(['second']));
  });
});

describe('maximum connection age', () => {
  it('makes clients of one address reconnect, so a load balancer can spread them over new replicas', async () => {
    const server = await startReplica('aged', { ageMs: 300 });
    const proxy = await startFreezableProxy({ host: '127.0.0.1', port: server.port });
    proxies.push(proxy);
    const replicas = pool(`127.0.0.1:${proxy.port}`);
    pools.push(replicas);
    const answers: string[] = [];
    const until = Date.now() + 1_500;
    while (Date.now() < until) {
      answers.push(await replicas.call((client) => who(client, { deadlineMs: 1_000 }), { retry: true }));
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(answers.every((name) => name === 'aged')).toBe(true);
    expect(proxy.connections()).toBeGreaterThanOrEqual(2);
  });
});
