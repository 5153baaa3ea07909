import { z } from 'zod';
import type { Logger } from '../logger.ts';
import type { Store } from '../store/store.ts';
import type { HealthEntry } from './health-entries.ts';
import type { KeyLimits } from './health-signals.ts';
import { type BucketRow, compactRow } from './health-window.ts';
import type { LoadBalancerConfig } from './load-balancer-config.ts';

/**
 * The document each router replica shares: its window of every target, its load per provider, the targets
 * it holds Failed by its own measurement (ejected after failures in a row, or by error rate), with when, its
 * requests in flight and use of the last minute per target (`[in flight, requests, tokens]`), and the
 * rpm/tpm limits of the keys it serves, by provider. Fields added later default to empty: every build reads
 * every other's.
 */
const sharedWindowSchema = z.object({
  at: z.number(),
  load: z.record(z.string(), z.tuple([z.number(), z.number()])),
  targets: z.record(z.string(), z.array(z.array(z.number()))),
  failed: z.record(z.string(), z.number()).default({}),
  flow: z.record(z.string(), z.tuple([z.number(), z.number(), z.number()])).default({}),
  limits: z
    .record(
      z.string(),
      z.array(
        z.object({
          key: z.string(),
          rpm: z.number().optional(),
          tpm: z.number().optional(),
          models: z.array(z.string()).default([]),
        }),
      ),
    )
    .default({}),
});

const WINDOWS = 'health-windows';

/** What the other replicas shared, added up: read at a recompute, and kept when the store cannot be reached. */
export interface RemoteWindows {
  rows: ReadonlyMap<string, BucketRow[]>;
  /** In-flight requests and capacity per provider. */
  load: ReadonlyMap<string, [number, number]>;
  /** Targets some replica holds Failed by its own measurement, and since when (the latest). */
  failed: ReadonlyMap<string, number>;
  /** Per target: requests in flight, and requests and tokens of the last minute, added up. */
  flow: ReadonlyMap<string, [inflight: number, requests: number, tokens: number]>;
  /** Key limits by provider, as the replica that published last saw them. */
  limits: ReadonlyMap<string, readonly KeyLimits[]>;
}

export const NO_REMOTE_WINDOWS: RemoteWindows = {
  rows: new Map(),
  load: new Map(),
  failed: new Map(),
  flow: new Map(),
  limits: new Map(),
};

/**
 * A target on this replica at a recompute: requests in flight, requests and tokens of the last minute, and
 * its monotonic counters as those were read (what it records after is added live).
 */
export interface LocalFlow {
  inflight: number;
  requests: number;
  tokens: number;
  countedRequests: number;
  countedTokens: number;
}

/** What this replica contributes at a recompute. */
export interface LocalWindows {
  now: number;
  config: LoadBalancerConfig;
  /** This replica's rows of each target, inside the window. */
  rows: ReadonlyMap<string, BucketRow[]>;
  load: ReadonlyMap<string, { inflight: number; capacity: number }>;
  /** This replica's flow of each target. */
  flows: ReadonlyMap<string, LocalFlow>;
  /** The limits of the keys this replica serves, by provider. */
  limits: ReadonlyMap<string, readonly KeyLimits[]>;
  entries: ReadonlyMap<string, HealthEntry>;
}

/**
 * Cluster mode: the replicas' windows in the store's `health-windows` collection, one document per replica.
 * A replica that publishes writes its own; every one reads the others'.
 */
export class SharedWindows {
  /** The others' windows as of the last exchange that reached the store. */
  remote: RemoteWindows = NO_REMOTE_WINDOWS;
  private readonly store: Store;
  private readonly share: { replicaId: string; publish: boolean };
  private readonly logger: Logger | undefined;

  constructor(options: {
    store: Store;
    share: { replicaId: string; publish: boolean };
    logger?: Logger | undefined;
  }) {
    this.store = options.store;
    this.share = options.share;
    this.logger = options.logger;
  }

  /** Writes this replica's window, reads the others'; a store that fails keeps the last view. */
  async exchange(local: LocalWindows): Promise<void> {
    const { store, share } = this;
    const { now, config } = local;
    const windowMs = config.window_ms;
    try {
      if (share.publish) await store.put(WINDOWS, share.replicaId, sharedDocument(local));
      const rows = new Map<string, BucketRow[]>();
      const load = new Map<string, [number, number]>();
      const failed = new Map<string, number>();
      const flow = new Map<string, [number, number, number]>();
      const limits = new Map<string, { at: number; keys: KeyLimits[] }>();
      for (const { id, value } of await store.list(WINDOWS)) {
        if (id === share.replicaId) continue;
        const parsed = sharedWindowSchema.safeParse(value);
        if (!parsed.success || parsed.data.at < now - windowMs * 10) {
          // A replica gone for long (or a document no replica can read): nobody else will remove it.
          await store.delete(WINDOWS, id);
          continue;
        }
        if (parsed.data.at < now - 2 * config.recompute_interval_ms - windowMs) continue;
        for (const [target, targetRows] of Object.entries(parsed.data.targets)) {
          const merged = rows.get(target) ?? [];
          merged.push(...targetRows);
          rows.set(target, merged);
        }
        for (const [provider, [inflight, capacity]] of Object.entries(parsed.data.load)) {
          const sum = load.get(provider) ?? [0, 0];
          load.set(provider, [sum[0] + inflight, sum[1] + capacity]);
        }
        for (const [target, at] of Object.entries(parsed.data.failed)) {
          failed.set(target, Math.max(at, failed.get(target) ?? 0));
        }
        for (const [target, [inflight, requests, tokens]] of Object.entries(parsed.data.flow)) {
          const sum = flow.get(target) ?? [0, 0, 0];
          flow.set(target, [sum[0] + inflight, sum[1] + requests, sum[2] + tokens]);
        }
        for (const [provider, keys] of Object.entries(parsed.data.limits)) {
          if ((limits.get(provider)?.at ?? -1) < parsed.data.at)
            limits.set(provider, { at: parsed.data.at, keys });
        }
      }
      const limitsByProvider = new Map([...limits].map(([provider, { keys }]) => [provider, keys] as const));
      this.remote = { rows, load, failed, flow, limits: limitsByProvider };
    } catch (error) {
      this.logger?.warn({ err: error }, 'health: the store cannot be reached; routing on the last view');
    }
  }
}

function sharedDocument(local: LocalWindows): z.input<typeof sharedWindowSchema> {
  const targets: Record<string, BucketRow[]> = {};
  for (const [id, rows] of local.rows) if (rows.length > 0) targets[id] = rows.map(compactRow);
  const load: Record<string, [number, number]> = {};
  for (const [provider, { inflight, capacity }] of local.load) load[provider] = [inflight, capacity];
  const failed: Record<string, number> = {};
  for (const entry of local.entries.values()) {
    if (entry.kind === 'target' && entry.state.state === 'failed' && !entry.adopted) {
      failed[entry.id] = entry.failedAt;
    }
  }
  const flow: Record<string, [number, number, number]> = {};
  for (const [id, { inflight, requests, tokens }] of local.flows) {
    if (inflight > 0 || requests > 0 || tokens > 0) flow[id] = [inflight, requests, tokens];
  }
  const limits: Record<string, Array<KeyLimits & { models: string[] }>> = {};
  for (const [provider, keys] of local.limits) {
    limits[provider] = keys.map((key) => ({ ...key, models: [...key.models] }));
  }
  return { at: local.now, load, targets, failed, flow, limits };
}
