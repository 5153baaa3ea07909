import { z } from 'zod';
import type { Logger } from '../logger.ts';
import type { Store } from '../store/store.ts';
import type { HealthEntry } from './health-entries.ts';
import type { BucketRow } from './health-window.ts';
import type { LoadBalancerConfig } from './load-balancer-config.ts';

/**
 * The document each router replica shares: its window of every target, its load per provider, and the targets
 * it holds Failed by its own measurement (ejected after failures in a row, or by error rate), with when.
 */
const sharedWindowSchema = z.object({
  at: z.number(),
  load: z.record(z.string(), z.tuple([z.number(), z.number()])),
  targets: z.record(z.string(), z.array(z.array(z.number()))),
  failed: z.record(z.string(), z.number()).default({}),
});

const WINDOWS = 'health-windows';

/** What the other replicas shared, added up: read at a recompute, and kept when the store cannot be reached. */
export interface RemoteWindows {
  rows: ReadonlyMap<string, BucketRow[]>;
  /** In-flight requests and capacity per provider. */
  load: ReadonlyMap<string, [number, number]>;
  /** Targets some replica holds Failed by its own measurement, and since when (the latest). */
  failed: ReadonlyMap<string, number>;
}

export const NO_REMOTE_WINDOWS: RemoteWindows = { rows: new Map(), load: new Map(), failed: new Map() };

/** What this replica contributes at a recompute. */
export interface LocalWindows {
  now: number;
  config: LoadBalancerConfig;
  /** This replica's rows of each target, inside the window. */
  rows: ReadonlyMap<string, BucketRow[]>;
  load: ReadonlyMap<string, { inflight: number; capacity: number }>;
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
      }
      this.remote = { rows, load, failed };
    } catch (error) {
      this.logger?.warn({ err: error }, 'health: the store cannot be reached; routing on the last view');
    }
  }
}

function sharedDocument(local: LocalWindows): z.input<typeof sharedWindowSchema> {
  const targets: Record<string, BucketRow[]> = {};
  for (const [id, rows] of local.rows) if (rows.length > 0) targets[id] = rows;
  const load: Record<string, [number, number]> = {};
  for (const [provider, { inflight, capacity }] of local.load) load[provider] = [inflight, capacity];
  const failed: Record<string, number> = {};
  for (const entry of local.entries.values()) {
    if (entry.kind === 'target' && entry.state.state === 'failed' && !entry.adopted) {
      failed[entry.id] = entry.failedAt;
    }
  }
  return { at: local.now, load, targets, failed };
}
