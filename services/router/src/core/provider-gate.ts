import { GatewayError, type Metrics, type NetworkConfig, requestCancelled } from '@gw/shared';

/** Frees a place taken by `acquire`; a second call does nothing. */
export type Release = () => void;

interface Waiter {
  admit: () => void;
  refuse: (error: Error) => void;
}

/**
 * One provider's concurrency bound on this replica (`network_config.concurrency`): past it requests wait, in
 * order, in a queue of `buffer_size`; with the queue full a request is dropped at once when
 * `drop_excess_requests` says so, else it waits too; nobody waits longer than the provider's `timeout_ms`.
 * Every drop is a 503 `request_dropped`, counted by reason.
 */
class ProviderGate {
  inflight = 0;
  private readonly waiters: Waiter[] = [];

  private readonly provider: string;
  private readonly dependencies: { metrics: Metrics; onLoad: (inflight: number) => void };

  constructor(provider: string, dependencies: { metrics: Metrics; onLoad: (inflight: number) => void }) {
    this.provider = provider;
    this.dependencies = dependencies;
  }

  acquire(network: NetworkConfig, signal: AbortSignal): Release | Promise<Release> {
    const bound = network.concurrency;
    if (bound === undefined || (this.inflight < bound && this.waiters.length === 0)) return this.take();
    if (this.waiters.length >= network.buffer_size && network.drop_excess_requests) {
      throw this.drop('provider_queue_full', `its queue of ${network.buffer_size} is full`);
    }
    return new Promise<Release>((resolve, reject) => {
      const waiter: Waiter = {
        admit: () => {
          settle();
          resolve(this.take());
        },
        refuse: (error) => {
          settle();
          reject(error);
        },
      };
      const timer = setTimeout(
        () =>
          waiter.refuse(
            this.drop('provider_queue_timeout', `no place became free within ${network.timeout_ms} ms`),
          ),
        network.timeout_ms,
      );
      const onAbort = () => waiter.refuse(requestCancelled());
      const settle = () => {
        clearTimeout(timer);
        signal.removeEventListener('abort', onAbort);
        const index = this.waiters.indexOf(waiter);
        if (index >= 0) this.waiters.splice(index, 1);
      };
      if (signal.aborted) return onAbort();
      signal.addEventListener('abort', onAbort, { once: true });
      this.waiters.push(waiter);
    });
  }

  private take(): Release {
    this.inflight++;
    this.dependencies.onLoad(this.inflight);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.inflight--;
      this.dependencies.onLoad(this.inflight);
      this.waiters[0]?.admit();
    };
  }

  private drop(reason: 'provider_queue_full' | 'provider_queue_timeout', why: string): GatewayError {
    this.dependencies.metrics.droppedRequests.inc({ provider: this.provider, reason });
    return new GatewayError({
      type: 'request_dropped',
      // The reason, for the ingress's dropped counts (it crosses gRPC with the error).
      code: reason,
      message: `provider '${this.provider}' is at its concurrency limit and ${why}`,
      provider: this.provider,
      retryAfter: 1,
    });
  }
}

interface GatesDependencies {
  metrics: Metrics;
  /** Told the provider's in-flight count and bound whenever it changes (utilization for health). */
  onLoad: (provider: string, inflight: number, capacity: number) => void;
}

/** The gates of every provider, made on first use (a provider's settings are read at each acquire). */
export class ProviderGates {
  private readonly gates = new Map<string, ProviderGate>();
  private readonly dependencies: GatesDependencies;

  constructor(dependencies: GatesDependencies) {
    this.dependencies = dependencies;
  }

  acquire(provider: string, network: NetworkConfig, signal: AbortSignal): Release | Promise<Release> {
    let gate = this.gates.get(provider);
    if (!gate) {
      gate = new ProviderGate(provider, {
        metrics: this.dependencies.metrics,
        onLoad: (inflight) => this.dependencies.onLoad(provider, inflight, network.concurrency ?? 0),
      });
      this.gates.set(provider, gate);
    }
    return gate.acquire(network, signal);
  }
}
