/** What an observer of a stream is told: each item, and once its end (finished, failed, or abandoned). */
export interface StreamObserver<Item> {
  item(item: Item): void;
  end(error?: unknown): void;
}

/**
 * A stream with observers, as one proxy of the source's iterator. A stream of gw passes through several
 * observers (the router's call report, the ingress's settle and request record); each proxy of its own would
 * cost a promise and its microtasks on every chunk, so an observer added to an observed stream joins its list
 * instead (observeStream).
 */
class ObservedStream<Item> implements AsyncIterable<Item> {
  readonly source: AsyncIterable<Item>;
  /** Innermost first: the order the proxies they stand for would have seen an item in. */
  readonly observers: ReadonlyArray<StreamObserver<Item>>;

  constructor(source: AsyncIterable<Item>, observers: ReadonlyArray<StreamObserver<Item>>) {
    this.source = source;
    this.observers = observers;
  }

  [Symbol.asyncIterator](): AsyncIterator<Item> {
    const inner = this.source[Symbol.asyncIterator]();
    const { observers } = this;
    let ended = false;
    /** A stream that ended by itself ends its inner observers first, as nested proxies would. */
    const endInnermostFirst = (error?: unknown) => {
      if (ended) return;
      ended = true;
      for (const observer of observers) observer.end(error);
    };
    return {
      async next() {
        try {
          const result = await inner.next();
          if (result.done) endInnermostFirst();
          else for (const observer of observers) observer.item(result.value);
          return result;
        } catch (error) {
          endInnermostFirst(error);
          throw error;
        }
      },
      async return(value?: unknown) {
        // A reader that stops reaches the outermost proxy first, and each proxy tells its observer before it
        // passes the stop inwards.
        if (!ended) {
          ended = true;
          for (let index = observers.length - 1; index >= 0; index--) observers[index]!.end();
        }
        const result = await inner.return?.(value);
        return result ?? { done: true, value: undefined };
      },
    };
  }
}

/**
 * A stream that tells `observer` about each item and, once, about its end (finished, failed, or abandoned by
 * its reader). A stream that is already observed gets one more observer in the same
 * proxy.
 */
export function observeStream<Item>(
  items: AsyncIterable<Item>,
  observer: StreamObserver<Item>,
): AsyncIterable<Item> {
  if (items instanceof ObservedStream) {
    const observed = items as ObservedStream<Item>;
    return new ObservedStream(observed.source, [...observed.observers, observer]);
  }
  return new ObservedStream(items, [observer]);
}
