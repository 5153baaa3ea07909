import { describe, expect, it } from 'vitest';
import { fixed, LiveValue } from './live.ts';

describe('LiveValue', () => {
  it('replaces its value with a frozen snapshot, telling listeners; an equal value tells no one', () => {
    const live = new LiveValue({ a: 1, nested: { b: [1, 2] } });
    const seen: number[] = [];
    live.onChange((value) => seen.push(value.a));
    const before = live.current();
    expect(Object.isFrozen(before.nested.b)).toBe(true);
    expect(() => {
      (before.nested.b as number[]).push(3);
    }).toThrow(TypeError);
    expect(live.replace({ a: 1, nested: { b: [1, 2] } })).toBe(false);
    expect(live.replace({ a: 2, nested: { b: [1, 2] } })).toBe(true);
    expect(seen).toEqual([2]);
    // A reader that kept the old snapshot still sees it as it was.
    expect(before.a).toBe(1);
    expect(live.current().a).toBe(2);
  });

  it('selects a part that keeps its identity while unchanged and tells only of its own changes', () => {
    const live = new LiveValue({ client: { limit: 1 }, logs: { on: true } });
    const client = live.select((value) => value.client);
    const seen: number[] = [];
    const stop = client.onChange((value) => seen.push(value.limit));
    const first = client.current();
    live.replace({ client: { limit: 1 }, logs: { on: false } });
    expect(client.current()).toBe(first);
    live.replace({ client: { limit: 5 }, logs: { on: false } });
    expect(client.current().limit).toBe(5);
    expect(seen).toEqual([5]);
    stop();
    live.replace({ client: { limit: 6 }, logs: { on: false } });
    expect(seen).toEqual([5]);
  });

  it('fixed: a value that never changes', () => {
    const value = fixed({ a: 1 });
    expect(value.current()).toEqual({ a: 1 });
    expect(Object.isFrozen(value.current())).toBe(true);
  });
});
