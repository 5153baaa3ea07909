import { lookup } from 'node:dns/promises';
import {
  Channel,
  type ChannelCredentials,
  type ChannelOptions,
  Client,
  type ClientOptions,
  connectivityState,
  Metadata,
  type ServiceError,
  status,
} from '@grpc/grpc-js';
import { CallWindow } from './call-window.ts';
import { loadService } from './grpc-channel.ts';
import { carriesGatewayError } from './grpc-errors.ts';
import { channelCredentials, type GrpcSecurity, tokenInterceptor } from './grpc-security.ts';

/**
 * The replicas of one service as a client sees them, each on its own channel, picked round-robin among the
 * healthy ones. A replica that misses a deadline, cannot be reached or loses its connection is ejected at
 * once and readmitted only after it answers a health check, so a frozen replica (SIGSTOP, a GC pause, a
 * partitioned pod) costs at most about two deadlines to the calls that were on it and nothing to later ones.
 * Every replica answers a health check every half deadline; one that misses it is ejected, and one that misses
 * two in a row has the long calls running on it (streams) fail at once, as it will not finish them. (HTTP/2
 * keepalive would notice the same, but grpc-js keeps pinging a connection after the server's GOAWAY, and the
 * refused ping drops the calls still draining on it: every stream on a replica that shuts down or ages out its
 * connection.)
 * A `dns:` address is
 * re-resolved periodically, so a replica an autoscaler adds gets its share of calls (and servers close
 * connections past a maximum age, so clients of a plain `host:port` behind a load balancer spread too).
 */
export interface GrpcClientSettings {
  /** `host:port`, `ip:port,ip:port…`, or `dns:///name:port` (a headless Service: one replica per record). */
  address: string;
  security: GrpcSecurity;
  /** Most time a health check or a short call may take (GW_GRPC_DEADLINE_MS); keepalive runs at half. */
  deadlineMs: number;
  /** Told how long each call took, by method (`gw_grpc_client_duration_seconds`: the latency of each hop). */
  observe?: ((method: string, seconds: number) => void) | undefined;
}

export interface ReplicaPoolOptions<Stub> extends GrpcClientSettings {
  /** The typed client of one replica: its constructor called with these arguments. */
  create: (target: string, credentials: ChannelCredentials, options: ClientOptions) => Stub;
  /** How often a `dns:` address is resolved again; 15 s by default. */
  resolveIntervalMs?: number;
  /** The addresses of a name (tests give their own); `dns.lookup` by default. */
  resolve?: (host: string) => Promise<string[]>;
  /**
   * Short calls on the wire at once per replica; more wait in this client, in order (a CallWindow), for
   * at most ten deadlines. Unbounded by default: streams and long calls must not wait behind each other.
   */
  maxInFlightPerReplica?: number;
}

/** Most calls a CallWindow holds back before it refuses more. */
const MAX_WAITING_CALLS = 10_000;

/** Health checks in a row a replica leaves unanswered before the long calls it holds are aborted. */
const SILENT_CHECKS_TO_ABORT = 2;

interface Replica<Stub> {
  target: string;
  channel: Channel;
  stub: Stub;
  health: Client;
  /** Admitted to the pick: answered its last health check (or not checked yet). */
  healthy: boolean;
  /** Its last health check answered SERVING (false until one has). */
  serving: boolean;
  /** A health check is under way. */
  checking: boolean;
  /** Health checks in a row it did not answer within the deadline, while nothing else came from it either. */
  silentChecks: number;
  /** When a watched call last received something from it (a lane's messages: a sign of life). */
  heardAt: number;
  removed: boolean;
  /** Long calls running on it, aborted when it stops answering. */
  calls: Set<AbortController>;
}

/** A call watched for its replica's health: `signal` aborts when the replica stops answering. */
export interface WatchedCall {
  signal: AbortSignal;
  /** Whether the call was aborted because its replica stopped answering. */
  faulted(): boolean;
  /**
   * Something came from the replica on this call: a replica that sends data is busy or starved, not frozen,
   * and a health check it leaves unanswered meanwhile does not count toward aborting its calls.
   */
  heard(): void;
  release(): void;
}

/** What a pool's caller gets for one call: the replica's stub, and how to report its outcome. */
export interface PickedReplica<Stub> {
  stub: Stub;
  target: string;
}

const MAX_MESSAGE_BYTES = 64 * 1024 * 1024;

/** How long a channel without a connection waits between attempts (at most a deadline, at most a second). */
function reconnectMs(deadlineMs: number): number {
  return Math.min(1_000, deadlineMs);
}

function channelOptions(deadlineMs: number): ChannelOptions {
  return {
    'grpc.max_receive_message_length': MAX_MESSAGE_BYTES,
    'grpc.max_send_message_length': MAX_MESSAGE_BYTES,
    // A lost connection is retried about once a second, without growing waits: the health check, not the backoff,
    // decides readmission, and a replica that starts after its clients (a router up after the ingress) is
    // connected within a second rather than after a backoff grown to seconds while it was down.
    'grpc.initial_reconnect_backoff_ms': reconnectMs(deadlineMs),
    'grpc.max_reconnect_backoff_ms': reconnectMs(deadlineMs),
  };
}

/** `dns:///name:port` or `dns:name:port` → name and port; undefined for any other address. */
function dnsName(address: string): { host: string; port: string } | undefined {
  const match = /^dns:(?:\/\/[^/]*\/)?(.+):(\d{1,5})$/.exec(address);
  return match ? { host: match[1]!.replace(/^\[|\]$/g, ''), port: match[2]! } : undefined;
}

const defaultResolve = async (host: string) =>
  (await lookup(host, { all: true })).map(({ address, family }) => (family === 6 ? `[${address}]` : address));

/** Marks the errors of calls the pool never sent (no replica connected, or its window full). */
const NEVER_SENT = Symbol('gw.never-sent');

/** A call that found no replica to run on, as grpc-js reports a channel that cannot connect. */
function unavailable(details: string): ServiceError {
  return Object.assign(new Error(details), {
    code: status.UNAVAILABLE,
    details,
    metadata: new Metadata(),
    [NEVER_SENT]: true,
  });
}

/** Whether a call failed before the pool sent it anywhere: no replica can have served it. */
export function neverSent(error: unknown): boolean {
  return typeof error === 'object' && error !== null && NEVER_SENT in error;
}

/** Whether a failed call says the replica, not the request, is at fault (down, frozen, too slow). */
export function replicaFault(error: unknown): boolean {
  const code = (error as Partial<ServiceError> | undefined)?.code;
  return (code === status.UNAVAILABLE || code === status.DEADLINE_EXCEEDED) && !carriesGatewayError(error);
}

export class ReplicaPool<Stub> {
  private readonly options: ReplicaPoolOptions<Stub>;
  private readonly channelOptions: ChannelOptions;
  private replicas: Replica<Stub>[] = [];
  private next = 0;
  private resolveTimer: NodeJS.Timeout | undefined;
  private readonly monitor: NodeJS.Timeout;
  private closed = false;
  private readonly window: CallWindow | undefined;

  constructor(options: ReplicaPoolOptions<Stub>) {
    this.options = options;
    this.channelOptions = channelOptions(options.deadlineMs);
    const perReplica = options.maxInFlightPerReplica;
    if (perReplica !== undefined) {
      this.window = new CallWindow({
        limit: () => perReplica * Math.max(1, this.replicas.length),
        maxWaiting: MAX_WAITING_CALLS,
        maxWaitMs: 10 * options.deadlineMs,
        refuse: (reason) => unavailable(`${options.address} is overloaded: ${reason}`),
      });
    }
    const name = dnsName(options.address);
    if (name) {
      // Until the first lookup answers, grpc-js resolves the name itself on one channel.
      this.replicas = [this.open(options.address)];
      const refresh = () => this.refresh(name).catch(() => {});
      void refresh();
      this.resolveTimer = setInterval(refresh, options.resolveIntervalMs ?? 15_000);
      this.resolveTimer.unref();
    } else {
      const targets = options.address.includes(',') ? options.address.split(',') : [options.address];
      this.replicas = targets.map((target) => this.open(target.replace(/^ipv4:/, '')));
    }
    this.monitor = setInterval(() => this.checkAll(), Math.max(50, options.deadlineMs / 2));
    this.monitor.unref();
  }

  /** The next healthy replica (any replica when none is healthy), skipping those in `avoid` while others remain. */
  pick(avoid?: ReadonlySet<string>): PickedReplica<Stub> {
    const { replicas } = this;
    const count = replicas.length;
    let fallback: Replica<Stub> | undefined;
    for (let step = 0; step < count; step++) {
      const replica = replicas[(this.next + step) % count]!;
      if (avoid?.has(replica.target)) continue;
      if (replica.healthy) {
        this.next = (this.next + step + 1) % count;
        return { stub: replica.stub, target: replica.target };
      }
      fallback ??= replica;
    }
    this.next = (this.next + 1) % count;
    const chosen = fallback ?? replicas[this.next]!;
    return { stub: chosen.stub, target: chosen.target };
  }

  /** Reports how a call on a replica ended; a replica fault ejects the replica until it answers again. */
  report(target: string, error: unknown): void {
    if (!replicaFault(error)) return;
    const replica = this.replicas.find((candidate) => candidate.target === target);
    if (replica) replica.healthy = false;
  }

  /** Watches a long call on a replica: its signal aborts when the replica misses a health check. */
  watch(target: string): WatchedCall {
    const controller = new AbortController();
    const replica = this.replicas.find((candidate) => candidate.target === target);
    replica?.calls.add(controller);
    return {
      signal: controller.signal,
      faulted: () => controller.signal.aborted,
      heard: () => {
        if (replica) replica.heardAt = Date.now();
      },
      release: () => replica?.calls.delete(controller),
    };
  }

  /**
   * A replica with an established connection: the next healthy one whose channel is ready, or becomes ready
   * within the deadline; one that does not is ejected and the next is tried (nothing was sent to it, so any
   * call may move on). Replicas in `avoid` are passed over while others remain. Throws UNAVAILABLE when no
   * replica connects.
   */
  async connected(avoid?: ReadonlySet<string>): Promise<PickedReplica<Stub>> {
    let failure: unknown;
    const tried = new Set<string>(avoid);
    for (let attempt = 0; attempt < this.replicas.length; attempt++) {
      const picked = this.pick(tried);
      if (tried.has(picked.target)) break;
      tried.add(picked.target);
      const replica = this.replicas.find((candidate) => candidate.target === picked.target);
      if (!replica) continue;
      try {
        await this.ready(replica);
        return picked;
      } catch (error) {
        failure = error;
        replica.healthy = false;
      }
    }
    throw failure ?? unavailable(`no replica of ${this.options.address} is connected`);
  }

  /**
   * Runs a call on a connected replica; when the replica is at fault (down, frozen, too slow) and `retry`
   * allows (idempotent calls), once more on another. The error of the last try is thrown as the call made it.
   * With `maxInFlightPerReplica`, the call first waits for a slot of the pool's window.
   */
  async call<Result>(run: (stub: Stub) => Promise<Result>, options: { retry: boolean }): Promise<Result> {
    return this.inWindow(() => this.callOnce(run, options));
  }

  /** Runs `run` once a slot of the pool's window is free (at once without `maxInFlightPerReplica`). */
  async inWindow<Result>(run: () => Promise<Result>): Promise<Result> {
    const waiting = this.window?.acquire();
    if (waiting) await waiting;
    try {
      return await run();
    } finally {
      this.window?.release();
    }
  }

  private async callOnce<Result>(
    run: (stub: Stub) => Promise<Result>,
    options: { retry: boolean },
  ): Promise<Result> {
    const first = await this.connected();
    try {
      return await run(first.stub);
    } catch (error) {
      this.report(first.target, error);
      if (!options.retry || !replicaFault(error) || this.replicas.length < 2) throw error;
      const second = await this.connected();
      try {
        return await run(second.stub);
      } catch (retryError) {
        this.report(second.target, retryError);
        throw retryError;
      }
    }
  }

  /**
   * Settles once the replica's channel is ready (at once when it is: the hot path), or fails after a deadline
   * and one wait between connection attempts (a channel between attempts gets its next one).
   */
  private ready(replica: Replica<Stub>): Promise<void> {
    let state = replica.channel.getConnectivityState(true);
    if (state === connectivityState.READY) return Promise.resolve();
    const waitMs = this.options.deadlineMs + reconnectMs(this.options.deadlineMs);
    const deadline = Date.now() + waitMs;
    return new Promise((resolve, reject) => {
      const wait = () =>
        replica.channel.watchConnectivityState(state, deadline, (error) => {
          if (error) {
            reject(unavailable(`${replica.target} did not connect within ${waitMs} ms`));
            return;
          }
          state = replica.channel.getConnectivityState(true);
          if (state === connectivityState.READY) resolve();
          else if (state === connectivityState.SHUTDOWN) reject(unavailable(`${replica.target} was removed`));
          else wait();
        });
      wait();
    });
  }

  /**
   * Replicas connected now whose last health check answered SERVING: what a caller's readiness waits for (one
   * is enough to take calls).
   */
  servingCount(): number {
    return this.replicas.filter(
      (replica) =>
        replica.serving &&
        !replica.removed &&
        replica.channel.getConnectivityState(false) === connectivityState.READY,
    ).length;
  }

  /** The targets and whether each is admitted (for tests and diagnostics). */
  state(): Array<{ target: string; healthy: boolean }> {
    return this.replicas.map(({ target, healthy }) => ({ target, healthy }));
  }

  close(): void {
    this.closed = true;
    clearInterval(this.resolveTimer);
    clearInterval(this.monitor);
    for (const replica of this.replicas) this.retire(replica);
    this.replicas = [];
  }

  private open(target: string): Replica<Stub> {
    const credentials = channelCredentials(this.options.security);
    const channel = new Channel(target, credentials, this.channelOptions);
    const replica: Replica<Stub> = {
      target,
      channel,
      stub: this.options.create(target, credentials, {
        channelOverride: channel,
        interceptors: [tokenInterceptor(this.options.security)],
      }),
      health: new Client(target, credentials, { channelOverride: channel }),
      healthy: true,
      serving: false,
      checking: false,
      silentChecks: 0,
      heardAt: 0,
      removed: false,
      calls: new Set(),
    };
    channel.getConnectivityState(true);
    return replica;
  }

  /**
   * Checks every replica: one that answers SERVING is admitted; any other is ejected. The long calls of one
   * that does not answer at all within the deadline twice in a row are aborted (one late answer is a busy or
   * starved process more often than a frozen one: new calls go elsewhere meanwhile, and the calls it holds get
   * another deadline); those of a replica that refuses (draining, or dead: then its connection is gone and its
   * calls failed already) are left to finish.
   */
  private checkAll(): void {
    for (const replica of this.replicas) {
      if (replica.checking || replica.removed) continue;
      replica.checking = true;
      const sentAt = Date.now();
      void this.check(replica).then((answer) => {
        replica.checking = false;
        if (replica.removed || this.closed) return;
        replica.healthy = answer === 'SERVING';
        replica.serving = replica.healthy;
        // Ejected from the picks all the same; its calls are aborted only when nothing at all came from it.
        const silent = answer === 'silent' && replica.heardAt < sentAt;
        replica.silentChecks = silent ? replica.silentChecks + 1 : 0;
        if (replica.silentChecks < SILENT_CHECKS_TO_ABORT) return;
        for (const call of replica.calls) call.abort();
        replica.calls.clear();
      });
    }
  }

  /**
   * The standard health check (grpc.health.v1): its answer, `refused` when the replica cannot be reached
   * (down, or draining: its listener is closed and its connections are going away), or `silent` when it did
   * not answer within the deadline (frozen, partitioned).
   */
  private check(replica: Replica<Stub>): Promise<string> {
    const method = loadService('health', 'Health').service['Check']!;
    return new Promise((resolve) => {
      replica.health.makeUnaryRequest(
        method.path,
        method.requestSerialize,
        method.responseDeserialize,
        { service: '' },
        new Metadata(),
        { deadline: Date.now() + this.options.deadlineMs },
        (error, reply?: { status?: string }) => {
          if (error) resolve(error.code === status.DEADLINE_EXCEEDED ? 'silent' : 'refused');
          else resolve(reply?.status ?? 'refused');
        },
      );
    });
  }

  /** Replaces the replicas by the name's current addresses, keeping the channels of those that remain. */
  private async refresh(name: { host: string; port: string }): Promise<void> {
    const addresses = await (this.options.resolve ?? defaultResolve)(name.host);
    if (this.closed || addresses.length === 0) return;
    const targets = new Set(addresses.map((address) => `${address}:${name.port}`));
    const kept = this.replicas.filter((replica) => targets.has(replica.target));
    for (const replica of this.replicas) if (!targets.has(replica.target)) this.retire(replica);
    const known = new Set(kept.map((replica) => replica.target));
    this.replicas = [
      ...kept,
      ...[...targets].filter((target) => !known.has(target)).map((t) => this.open(t)),
    ];
  }

  /** Closes a replica's channel; calls already on it finish (grpc-js closes the channel for new calls only). */
  private retire(replica: Replica<Stub>): void {
    replica.removed = true;
    replica.calls.clear();
    replica.channel.close();
  }
}
