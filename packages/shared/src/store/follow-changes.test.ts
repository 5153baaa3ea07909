import { afterEach, describe, expect, it, vi } from 'vitest';
import { silentLogger } from '../logger.ts';
import { type ChangeFollower, followChanges } from './follow-changes.ts';
import { MemoryStore } from './memory-store.ts';
import type { Store } from './store.ts';

const INTERVAL_MS = 20;

/** A store whose subscribers lose the messages published while `dropping` is true (a connection down). */
function lossyStore(inner: MemoryStore) {
  const state = { dropping: false, epoch: undefined as string | undefined | null };
  const store = new Proxy(inner, {
    get(target, property, receiver) {
      if (property === 'subscribe') {
        return (channel: string, handler: (message: string, sequence: number) => void) =>
          target.subscribe(channel, (message, sequence) => {
            if (!state.dropping) handler(message, sequence);
          });
      }
      // `null` plays a Redis whose data is gone (no marker); a string, a marker set by someone else.
      if (property === 'readEpoch' && state.epoch !== undefined) return async () => state.epoch ?? undefined;
      if (property === 'markEpoch' && state.epoch !== undefined) {
        // Set when there is none, then read back: Redis's SET NX and GET.
        return async (candidate: string) => {
          state.epoch ??= candidate;
          return state.epoch;
        };
      }
      return Reflect.get(target, property, receiver);
    },
  }) as Store;
  return { store, state };
}

describe('followChanges', () => {
  const followers: ChangeFollower[] = [];
  afterEach(async () => {
    await Promise.all(followers.splice(0).map((follower) => follower.close()));
  });

  async function follow(store: Store, extra: { reseed?: () => Promise<void> } = {}) {
    const calls = { messages: [] as string[], resyncs: 0 };
    const logger = { ...silentLogger(), error: vi.fn(), warn: vi.fn() };
    const follower = await followChanges({
      store,
      channel: 'changes',
      logger: logger as unknown as ReturnType<typeof silentLogger>,
      onMessage: (message) => calls.messages.push(message),
      resync: async () => {
        calls.resyncs++;
      },
      intervalMs: INTERVAL_MS,
      ...extra,
    });
    followers.push(follower);
    return { calls, logger, follower };
  }

  it('does not resync a busy channel whose notices all arrive', async () => {
    const { store } = lossyStore(await MemoryStore.open({}));
    const { calls } = await follow(store);
    for (let i = 0; i < 50; i++) await store.publish('changes', `change ${i}`);
    await vi.waitFor(() => expect(calls.messages).toHaveLength(50));
    await new Promise((resolve) => setTimeout(resolve, INTERVAL_MS * 5));
    expect(calls.resyncs).toBe(0);
  });

  it('resyncs within two checks of a notice that was lost', async () => {
    const { store, state } = lossyStore(await MemoryStore.open({}));
    const { calls, logger } = await follow(store);
    state.dropping = true;
    await store.publish('changes', 'lost');
    state.dropping = false;
    await store.publish('changes', 'heard');
    await vi.waitFor(() => expect(calls.resyncs).toBe(1), { timeout: INTERVAL_MS * 10 });
    expect(calls.messages).toEqual(['heard']);
    expect(logger.warn).toHaveBeenCalledWith(
      expect.objectContaining({ channel: 'changes' }),
      expect.any(String),
    );
    await new Promise((resolve) => setTimeout(resolve, INTERVAL_MS * 5));
    expect(calls.resyncs).toBe(1);
  });

  it('reseeds, resyncs and reports an error when the store lost its data', async () => {
    const { store, state } = lossyStore(await MemoryStore.open({}));
    const reseed = vi.fn(async () => {});
    const { calls, logger } = await follow(store, { reseed });
    state.epoch = null;
    await vi.waitFor(() => expect(reseed).toHaveBeenCalledTimes(1), { timeout: INTERVAL_MS * 10 });
    await vi.waitFor(() => expect(calls.resyncs).toBe(1));
    expect(logger.error.mock.calls[0]?.[1]).toContain('lost its data');
  });

  it('tries a reseed that failed again at the next check, reporting the loss once', async () => {
    const { store, state } = lossyStore(await MemoryStore.open({}));
    let attempts = 0;
    const reseed = vi.fn(async () => {
      attempts++;
      if (attempts < 3) throw new Error('reseed failed');
    });
    const { calls, logger } = await follow(store, { reseed });
    state.epoch = null;
    await vi.waitFor(() => expect(calls.resyncs).toBe(1), { timeout: INTERVAL_MS * 20 });
    expect(reseed).toHaveBeenCalledTimes(3);
    const losses = logger.error.mock.calls.filter((call) => String(call[1]).includes('lost its data'));
    expect(losses).toHaveLength(1);
    // Once a reseed went through, the marker it set is the one followed: no more reseeds.
    await new Promise((resolve) => setTimeout(resolve, INTERVAL_MS * 5));
    expect(reseed).toHaveBeenCalledTimes(3);
    expect(calls.resyncs).toBe(1);
  });
});
