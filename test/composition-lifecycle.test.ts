// A composition root's lifecycle as a stack: when a start fails halfway, what started before it is released, in
// reverse order, and the failure is the one the caller sees. The embedded gateway's first three starts are
// tracing, the secret resolver and guardrails (its store is the test's, so not its to start).
import { parseGatewayConfig, silentLogger } from '@gw/shared';
import { MemoryStore } from '@gw/shared/store';
import { afterEach, describe, expect, it, vi } from 'vitest';

const released = vi.hoisted((): string[] => []);

/** A started component that records its disposal. */
function recorded(name: string) {
  return {
    async close() {},
    async shutdown() {},
    tracer: () => undefined,
    async [Symbol.asyncDispose]() {
      released.push(name);
    },
  };
}

vi.mock('@gw/shared/tracing', async (original) => ({
  ...(await original<object>()),
  startTracing: async () => recorded('tracing'),
}));
vi.mock('@gw/vault', async (original) => ({
  ...(await original<object>()),
  startSecretResolver: async () => recorded('secrets'),
}));
vi.mock('@gw/guardrails/registry', async (original) => ({
  ...(await original<object>()),
  GuardrailRuntime: {
    start: async () => {
      throw new Error('guardrails: the third start fails');
    },
  },
}));

const { startEmbeddedGateway } = await import('../src/embedded-gateway.ts');

describe('composition root lifecycle', () => {
  afterEach(() => {
    released.length = 0;
  });

  it('releases the first two starts in reverse order when the third throws, and rethrows its error', async () => {
    const store = await MemoryStore.open();
    await expect(
      startEmbeddedGateway({
        config: parseGatewayConfig({}),
        logger: silentLogger(),
        port: 0,
        host: '127.0.0.1',
        dataDir: '/nonexistent/never-opened',
        environment: {},
        store,
      }),
    ).rejects.toThrow('guardrails: the third start fails');
    expect(released).toEqual(['secrets', 'tracing']);
    await store.close();
  });
});
