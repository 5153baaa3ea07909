// Run by test/tracing.test.ts in a fresh process (`node tracing-module-probe.ts on|off`): starts the embedded
// gateway with tracing on or off, serves one request that carries a sampled `traceparent`, stops, and prints
// the @opentelemetry packages this process loaded and the spans an OTLP receiver got, as one JSON line.
import { registerHooks } from 'node:module';

const loaded = new Set<string>();
// Every module resolved from here on (import and require alike) is seen, before any gw code is imported.
registerHooks({
  resolve(specifier, context, nextResolve) {
    const result = nextResolve(specifier, context);
    const match = /\/node_modules\/(@opentelemetry\/[^/]+)\//.exec(result.url);
    if (match) loaded.add(match[1]!);
    return result;
  },
});

// The testkit's files one by one: its index also loads vitest (its contract suites), which loads the API.
const { startEmbedded } = await import('../../packages/testkit/src/gateway-launcher.ts');
const { startFakeOpenAi } = await import('../../packages/testkit/src/fake-openai.ts');
const { startOtlpReceiver } = await import('../../packages/testkit/src/otlp-receiver.ts');
const fake = await startFakeOpenAi();
const receiver = await startOtlpReceiver();
const gateway = await startEmbedded({
  config: {
    providers: { openai: { keys: [{ value: 'sk-probe' }], network_config: { base_url: fake.url } } },
    tracing: { enabled: process.argv[2] === 'on', endpoint: receiver.url },
  },
});
const response = await fetch(`${gateway.url}/v1/chat/completions`, {
  method: 'POST',
  headers: {
    'content-type': 'application/json',
    traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
  },
  body: JSON.stringify({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }),
});
await response.text();
if (response.status !== 200) throw new Error(`the probe's request answered ${response.status}`);
// Closing flushes what tracing queued.
await gateway.close();
await receiver.close();
await fake.close();
process.stdout.write(`${JSON.stringify({ modules: [...loaded].sort(), exported: receiver.spans.length })}\n`);
