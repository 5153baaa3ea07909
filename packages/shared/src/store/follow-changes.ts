import { randomUUID } from 'node:crypto';
import type { Logger } from '../logger.ts';
import type { Store } from './store.ts';

/**
 * How often a follower checks that it missed nothing. A replica that lost a change notice is stale for at
 * most two of these, plus the reload (documented in README's operations section).
 */
const RESYNC_INTERVAL_MS = 1_000;

export interface ChangeFollowerOptions {
  store: Store;
  channel: string;
  logger: Logger;
  /** One change notice, as published, with its number. */
  onMessage(message: string, sequence: number): void;
  /** Reads everything again from the store (a notice may have been missed). */
  resync(): Promise<void>;
  /** Writes the config file's share of the data again, when the store lost its data. */
  reseed?(): Promise<void>;
  intervalMs?: number;
}

export interface ChangeFollower {
  close(): Promise<void>;
}

/**
 * Follows a change channel without trusting pub/sub to deliver every notice. Notices are numbered; every
 * interval the follower reads the channel's last number, and a number it has not received by the check after
 * the one that first saw it (a notice lost while its connection was down) makes it resync everything. So a
 * replica is stale at most two intervals after a lost notice, and a busy channel costs no resync. It also
 * compares the store's epoch marker with the one it started with: a marker gone or replaced means the store
 * lost its data (a Redis restarted without persistence), which is logged as an error, reseeded from the
 * config file (at every check until a reseed succeeds), and resynced.
 *
 * Call it before the first load: a change published during that load is then caught by a later check.
 */
export async function followChanges(options: ChangeFollowerOptions): Promise<ChangeFollower> {
  const { store, channel, logger } = options;
  /** Numbers above `seen` that arrived; every number up to `seen` is accounted for. */
  const received = new Set<number>();
  let seen = Number.POSITIVE_INFINITY;
  const unsubscribe = await store.subscribe(channel, (message, sequence) => {
    if (sequence > seen) received.add(sequence);
    options.onMessage(message, sequence);
  });
  let epoch = await store.markEpoch(randomUUID());
  seen = await store.changeCount(channel);
  /** The last number of the check that first found one missing: all up to it must have come by the next. */
  let waitingFor: number | undefined;
  let running: Promise<void> | undefined;
  let failing = false;
  /** The loss of the store's data was reported and its reseed has not succeeded yet (it is tried each check). */
  let reseeding = false;

  const allReceived = (upTo: number) => {
    for (let sequence = seen + 1; sequence <= upTo; sequence++) if (!received.has(sequence)) return false;
    return true;
  };
  /** Everything up to `to` is accounted for (received, or reloaded). */
  const advance = (to: number) => {
    for (const sequence of received) if (sequence <= to) received.delete(sequence);
    seen = to;
  };
  const resyncAt = async (count: number) => {
    waitingFor = undefined;
    advance(count);
    await options.resync();
  };

  const checkOnce = async () => {
    const [current, count] = await Promise.all([store.readEpoch(), store.changeCount(channel)]);
    if (current !== epoch) {
      if (!reseeding) {
        logger.error(
          { channel, previous_epoch: epoch, epoch: current ?? null },
          'the state store lost its data (its epoch marker is gone or replaced): spend counters, open ' +
            'reservations and what the admin API wrote since the last save are gone; reseeding from the config ' +
            'file. Configure Redis persistence (appendonly yes) to keep them.',
        );
      }
      reseeding = true;
      const marked = await store.markEpoch(randomUUID());
      // The new marker is adopted only once the reseed is done: a reseed that fails is tried again at the next
      // check, rather than leaving the store without the config file's data until a restart.
      await options.reseed?.();
      epoch = marked;
      reseeding = false;
      received.clear();
      await resyncAt(await store.changeCount(channel));
      return;
    }
    if (allReceived(count)) {
      advance(Math.max(seen, count));
      waitingFor = undefined;
      return;
    }
    if (waitingFor !== undefined && !allReceived(waitingFor)) {
      logger.warn({ channel, missed_after: seen }, 'a change notice was lost; reloading everything');
      await resyncAt(count);
      return;
    }
    if (waitingFor !== undefined) advance(waitingFor);
    waitingFor = count;
  };
  const check = () => {
    running ??= checkOnce()
      .then(() => {
        if (failing) logger.info({ channel }, 'change follower recovered');
        failing = false;
      })
      .catch((error: unknown) => {
        // A store that is down fails every check; one line when it starts failing, not one per interval.
        if (!failing) logger.warn({ err: error, channel }, 'change check failed; retrying');
        failing = true;
      })
      .finally(() => {
        running = undefined;
      });
    return running;
  };

  const timer = setInterval(check, options.intervalMs ?? RESYNC_INTERVAL_MS);
  timer.unref();
  return {
    async close() {
      clearInterval(timer);
      await running;
      await unsubscribe();
    },
  };
}
