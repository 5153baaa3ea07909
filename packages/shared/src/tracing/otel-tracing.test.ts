// The OpenTelemetry side on its own: the W3C context it hands to the next hop, parent-based sampling, and the
// bounded export queue whose drops are counted in gw_tracing_spans_total.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { ROOT_CONTEXT } from '@opentelemetry/api';
import { SamplingDecision, TraceIdRatioBasedSampler } from '@opentelemetry/sdk-trace';
import { describe, expect, it } from 'vitest';
import { tracingConfigSchema } from '../config/tracing-config.ts';
import { silentLogger } from '../logger.ts';
import { createMetrics } from '../metrics.ts';
import { startTracing } from './start-tracing.ts';

const CALLER = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331';

async function counted(metrics: ReturnType<typeof createMetrics>, outcome: string): Promise<number> {
  const { values } = await metrics.tracingSpans.get();
  return values.find((value) => value.labels.outcome === outcome)?.value ?? 0;
}

/** Root spans never sampled, and nowhere to export to (nothing here waits for an export). */
const UNSAMPLED_ROOTS = {
  sampling_ratio: 0,
  endpoint: 'http://127.0.0.1:9/v1/traces',
  export_timeout_ms: 200,
};

async function tracingWith(config: Record<string, unknown>) {
  const metrics = createMetrics({ service: 'test', defaultMetrics: false });
  const tracing = await startTracing({
    config: tracingConfigSchema.parse({ enabled: true, ...config }),
    metrics,
    logger: silentLogger(),
  });
  return { tracing: tracing!, metrics };
}

describe('otel tracing', () => {
  it('is nothing at all when disabled', async () => {
    const metrics = createMetrics({ service: 'test', defaultMetrics: false });
    const config = tracingConfigSchema.parse({});
    expect(await startTracing({ config, metrics, logger: silentLogger() })).toBeUndefined();
  });

  it('continues the caller’s trace and follows its sampled flag, whatever the ratio', async () => {
    const { tracing } = await tracingWith(UNSAMPLED_ROOTS);
    const tracer = tracing.tracer('ingress');
    const sampled = tracer.startSpan('a', { parent: { traceparent: `${CALLER}-01`, tracestate: 'k=v' } });
    expect(sampled.recording).toBe(true);
    expect(sampled.context.traceparent).toMatch(/^00-0af7651916cd43dd8448eb211c80319c-[0-9a-f]{16}-01$/);
    expect(sampled.context.traceparent).not.toContain('b7ad6b7169203331');
    expect(sampled.context.tracestate).toBe('k=v');
    const unsampled = tracer.startSpan('b', { parent: { traceparent: `${CALLER}-00` } });
    expect(unsampled.recording).toBe(false);
    expect(unsampled.context.traceparent).toMatch(/^00-0af7651916cd43dd8448eb211c80319c-[0-9a-f]{16}-00$/);
    // Under an unsampled parent nothing is made: the next hop gets the same context.
    const child = tracing.tracer('router').startSpan('e', { parent: unsampled.context });
    expect(child.recording).toBe(false);
    expect(child.context.traceparent).toBe(unsampled.context.traceparent);
    // A root span at ratio 0, and a malformed parent (a new root), are not sampled.
    expect(tracer.startSpan('c').recording).toBe(false);
    expect(tracer.startSpan('d', { parent: { traceparent: `zz-${CALLER.slice(3)}-01` } }).recording).toBe(
      false,
    );
    for (const span of [sampled, unsampled]) span.end();
    await tracing.shutdown();
  });

  it('samples a root by its trace id at the ratio, and passes an unsampled root’s context on as it is', async () => {
    const { tracing } = await tracingWith({ ...UNSAMPLED_ROOTS, sampling_ratio: 0.5 });
    const tracer = tracing.tracer('ingress');
    const bySampler = new TraceIdRatioBasedSampler(0.5);
    const roots = Array.from({ length: 400 }, () => tracer.startSpan('root', { kind: 'server' }));
    for (const root of roots) {
      const [, traceId, spanId, flags] = root.context.traceparent.split('-');
      expect(traceId).toMatch(/^[0-9a-f]{32}$/);
      expect(spanId).toMatch(/^[0-9a-f]{16}$/);
      expect(flags).toBe(root.recording ? '01' : '00');
      // The exported trace is the one the decision was made on: the SDK's sampler decides it alike.
      const decision = bySampler.shouldSample(ROOT_CONTEXT, traceId!).decision;
      expect(decision === SamplingDecision.RECORD_AND_SAMPLED).toBe(root.recording);
      const child = tracing.tracer('router').startSpan('child', { parent: root.context });
      expect(child.recording).toBe(root.recording);
      if (!root.recording) expect(child.context).toBe(root.context);
      else expect(child.context.traceparent).toContain(traceId);
    }
    // Half of them, as the ratio says (a second, independent draw would sample a quarter).
    const sampled = roots.filter((root) => root.recording).length;
    expect(sampled).toBeGreaterThan(140);
    expect(sampled).toBeLessThan(260);
    for (const root of roots) root.end();
    await tracing.shutdown();
  });

  it('computes a span’s attributes only when the span records them', async () => {
    const { tracing } = await tracingWith(UNSAMPLED_ROOTS);
    const tracer = tracing.tracer('ingress');
    const asked: string[] = [];
    const attributes = (name: string) => () => {
      asked.push(name);
      return { 'gw.request.id': name };
    };
    // A root at ratio 0, a child of an unsampled parent, and a child of a sampled one.
    tracer.startSpan('root', { attributes: attributes('root') }).end();
    tracer
      .startSpan('unsampled', {
        parent: { traceparent: `${CALLER}-00` },
        attributes: attributes('unsampled'),
      })
      .end();
    const sampled = tracer.startSpan('sampled', {
      parent: { traceparent: `${CALLER}-01` },
      attributes: attributes('sampled'),
    });
    expect(sampled.recording).toBe(true);
    sampled.end();
    expect(asked).toEqual(['sampled']);
    await tracing.shutdown();
  });

  it('drops spans past the queue bound and counts them', async () => {
    // A collector that never answers: the queue fills.
    const hanging = createServer(() => {});
    await new Promise<void>((resolve) => hanging.listen(0, '127.0.0.1', resolve));
    const { port } = hanging.address() as AddressInfo;
    const { tracing, metrics } = await tracingWith({
      endpoint: `http://127.0.0.1:${port}/v1/traces`,
      max_queue_size: 4,
      max_export_batch_size: 4,
      scheduled_delay_ms: 60_000,
      export_timeout_ms: 200,
    });
    const tracer = tracing.tracer('router');
    // The fourth span fills a batch, whose export then hangs; the queue refills with four, and the rest drop.
    for (let index = 0; index < 12; index++) tracer.startSpan(`s${index}`).end();
    expect(await counted(metrics, 'dropped')).toBe(4);
    await tracing.shutdown();
    // Both batches (the hung one and the one flushed at shutdown) fail at their timeout, and say so: every
    // span is accounted for.
    const until = Date.now() + 5_000;
    while ((await counted(metrics, 'failed')) < 8 && Date.now() < until) await sleep(20);
    expect(await counted(metrics, 'failed')).toBe(8);
    expect(await counted(metrics, 'exported')).toBe(0);
    hanging.closeAllConnections();
    hanging.close();
  });
});
