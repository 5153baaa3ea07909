// `node bench/health.ts`: what health-aware routing adds per request, in process: recording an attempt's
// outcome, weighing a key choice, and ordering a plan's targets, each over BENCH_HEALTH_CALLS (200,000) calls
// against a board tracking 3 providers × 4 keys × 20 models (240 targets and the 75 provider, key and model
// views derived from them); and one recompute of that board.

import { fixed } from '@gw/shared';
import { HealthBoard, healthId, loadBalancerConfigSchema } from '@gw/shared/health';

const calls = Number(process.env['BENCH_HEALTH_CALLS'] ?? 200_000);
const board = new HealthBoard({ config: fixed(loadBalancerConfigSchema.parse({})) });
const providers = ['openai', 'anthropic', 'gemini'];
for (const provider of providers) {
  for (let key = 0; key < 4; key++) {
    for (let model = 0; model < 20; model++) {
      board.record(
        { provider, key: `k${key}`, model: `m${model}` },
        { failure: model === 0, latencyMs: 40 + key },
      );
    }
  }
}
const started = performance.now();
await board.recompute();
const recomputeMs = performance.now() - started;

function timeIt(name: string, body: (index: number) => void): void {
  for (let index = 0; index < 10_000; index++) body(index);
  const start = process.hrtime.bigint();
  for (let index = 0; index < calls; index++) body(index);
  const nanoseconds = Number(process.hrtime.bigint() - start) / calls;
  console.log(`${name.padEnd(44)} ${(nanoseconds / 1000).toFixed(3)} µs a call`);
}

// As the router weighs keys (by their health for the model) and orders a plan (by the provider's model).
const keyCandidates = [0, 1, 2, 3].map((key) => ({
  ids: [healthId.target('openai', `k${key}`, 'm1')],
  weight: 1,
}));
const targets = providers.map((provider) => ({ provider, model: 'm1' }));
const ids = (target: { provider: string; model: string }) => [healthId.model(target.provider, target.model)];
console.log(
  `health board: ${providers.length * 4 * 20} targets and ${providers.length * (1 + 4 + 20)} views, recompute ${recomputeMs.toFixed(2)} ms`,
);
timeIt('record (provider, key and model)', (index) =>
  board.record({ provider: 'openai', key: `k${index & 3}`, model: 'm1' }, { failure: false, latencyMs: 40 }),
);
timeIt('weigh 4 keys', () => board.weigh(keyCandidates));
timeIt('order 3 targets', () => board.order(targets, ids));
