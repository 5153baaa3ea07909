/**
 * A started component as a resource of a composition root: disposing it (the root's AsyncDisposableStack,
 * in reverse order of starting) calls its own `close()`, which callers that hold it directly keep using.
 */
export function closeOnDispose<T extends { close(): Promise<void> | void }>(
  resource: T,
): T & AsyncDisposable {
  return Object.assign(resource, {
    async [Symbol.asyncDispose]() {
      await resource.close();
    },
  });
}
