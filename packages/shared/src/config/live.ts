import { isDeepStrictEqual } from 'node:util';

/**
 * A setting that can change while the process runs (docs/architecture.md "Declared configuration"). A change
 * replaces the value, never edits it: `current()` returns a frozen snapshot, and a reader that keeps one sees
 * the same values until it asks again. Components that follow settings take a `Live<…>` and read `current()` at
 * each use (a property read); everything else gets a plain, frozen value.
 */
export interface Live<T> {
  /** The value in force now: frozen, never edited. */
  current(): T;
  /** Calls `listener` with each new value (after it is in force); returns what stops it. */
  onChange(listener: (value: T) => void): () => void;
}

/** Freezes a value and everything reachable from it, so a snapshot cannot be edited by a reader. */
function deepFreeze<T>(value: T): T {
  if (value === null || typeof value !== 'object' || Object.isFrozen(value)) return value;
  // A typed array's elements cannot be frozen (and settings hold none).
  if (ArrayBuffer.isView(value)) return value;
  Object.freeze(value);
  for (const item of Object.values(value)) deepFreeze(item);
  return value;
}

/**
 * The owner's side of a live setting: `replace` puts a new value in force. A value equal to the current one
 * (structurally) changes nothing and tells no one, so a settings document re-read unchanged costs nothing.
 */
export class LiveValue<T> implements Live<T> {
  #value: T;
  readonly #listeners = new Set<(value: T) => void>();

  constructor(initial: T) {
    this.#value = deepFreeze(initial);
  }

  current(): T {
    return this.#value;
  }

  onChange(listener: (value: T) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Puts `value` in force (frozen) and tells every listener; false when it equals the current value. */
  replace(value: T): boolean {
    if (isDeepStrictEqual(value, this.#value)) return false;
    this.#value = deepFreeze(value);
    for (const listener of this.#listeners) listener(this.#value);
    return true;
  }

  /**
   * A part of this value, live: its `current()` is the part of the current value (the same object while the
   * part is unchanged, so a reader may compare by identity), and it tells only of changes of that part.
   */
  select<Part>(pick: (value: T) => Part): Live<Part> {
    return selected(this, pick);
  }
}

/** A part of a live value, following it. */
function selected<T, Part>(source: Live<T>, pick: (value: T) => Part): Live<Part> {
  let from = source.current();
  let part = pick(from);
  const current = () => {
    const now = source.current();
    if (now !== from) {
      const next = pick(now);
      from = now;
      // An unchanged part keeps its identity: readers that memoise on it do not redo their work.
      if (!isDeepStrictEqual(next, part)) part = next;
    }
    return part;
  };
  return {
    current,
    onChange(listener) {
      let last = current();
      return source.onChange(() => {
        const next = current();
        if (next === last) return;
        last = next;
        listener(next);
      });
    },
  };
}

/** A value that never changes, as a `Live` (restart-only settings, tests). */
export function fixed<T>(value: T): Live<T> {
  const frozen = deepFreeze(value);
  return { current: () => frozen, onChange: () => () => undefined };
}
