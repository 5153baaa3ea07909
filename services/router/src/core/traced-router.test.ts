// The router's request span around the core: what a recorded span gets, and that a span which does not
// record (nearly every request at a low sampling ratio) leaves the call as the core made it.
import type { SpanAttributes, SpanOptions, TraceContext, Tracer, TraceSpan } from '@gw/shared/tracing';
import { describe, expect, it } from 'vitest';
import type { CompletionRoute, RouterService, StreamItem } from './router-service.ts';
import { TracedRouter } from './traced-router.ts';

const PARENT: TraceContext = { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' };
const CHILD: TraceContext = { traceparent: '00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01' };
const OPTIONS = { signal: new AbortController().signal, trace: PARENT };
const ROUTE = {
  requestId: 'req-1',
  operation: 'chat',
  targets: [{ provider: 'openai', model: 'gpt-4o-mini' }],
  messages: [{ role: 'user', content: 'hi' }],
} as unknown as CompletionRoute;

function chunk(content: string, finish: string | null = null): StreamItem {
  return {
    chunk: {
      id: 'chatcmpl-1',
      object: 'chat.completion.chunk',
      created: 1,
      model: 'gpt-4o-mini',
      choices: [{ index: 0, delta: { content }, finish_reason: finish }],
    },
  } as StreamItem;
}

/** A tracer whose spans all record, or none do; each span keeps what was done to it. */
function fakeTracer(recording: boolean) {
  const spans: Array<{ name: string; options: SpanOptions; attributes: SpanAttributes; events: string[] }> =
    [];
  const tracer: Tracer = {
    includeContent: false,
    startSpan(name, options = {}): TraceSpan {
      const span = { name, options, attributes: {} as SpanAttributes, events: [] as string[] };
      spans.push(span);
      if (recording) Object.assign(span.attributes, options.attributes?.());
      return {
        context: CHILD,
        recording,
        setAttributes: (attributes) => {
          Object.assign(span.attributes, attributes);
        },
        fail: (error) => span.events.push(`fail: ${(error as Error).message}`),
        end: () => span.events.push('end'),
      };
    },
  };
  return { tracer, spans };
}

/** A core that answers streams with the given items (then the error, when one is given). */
function fakeCore(items: StreamItem[], error?: Error) {
  const calls: Array<{ trace: TraceContext | undefined }> = [];
  let made: AsyncGenerator<StreamItem> | undefined;
  const core = {
    stream(_request: CompletionRoute, options: { trace?: TraceContext }) {
      calls.push({ trace: options.trace });
      made = (async function* () {
        yield* items;
        if (error) throw error;
      })();
      return made;
    },
    close: async () => {},
  } as unknown as RouterService & { close(): Promise<void> };
  return { core, calls, made: () => made };
}

async function collect(stream: AsyncIterable<StreamItem>): Promise<StreamItem[]> {
  const items: StreamItem[] = [];
  for await (const item of stream) items.push(item);
  return items;
}

describe('TracedRouter streams', () => {
  it('gives the core’s own stream back when the span does not record, the span’s context passed on', async () => {
    const { tracer, spans } = fakeTracer(false);
    const { core, calls, made } = fakeCore([chunk('a'), chunk('b', 'stop')]);
    const router = new TracedRouter(core, tracer);
    const stream = router.stream(ROUTE, OPTIONS);
    expect(stream).toBe(made());
    expect(await collect(stream)).toHaveLength(2);
    expect(calls).toEqual([{ trace: CHILD }]);
    expect(spans).toHaveLength(1);
    expect(spans[0]!.options.parent).toBe(PARENT);
    expect(spans[0]!.attributes).toEqual({});
  });

  it('records the answer on a recording span and ends it after the last item', async () => {
    const { tracer, spans } = fakeTracer(true);
    const { core } = fakeCore([chunk('a'), chunk('b', 'stop')]);
    const router = new TracedRouter(core, tracer);
    const items = await collect(router.stream(ROUTE, OPTIONS));
    expect(items.map((item) => item.chunk.choices[0]?.delta?.content)).toEqual(['a', 'b']);
    expect(spans[0]!.name).toBe('gw.router.stream');
    expect(spans[0]!.attributes).toMatchObject({
      'gw.request_id': 'req-1',
      'gen_ai.request.model': 'gpt-4o-mini',
      'gen_ai.response.finish_reasons': ['stop'],
    });
    expect(spans[0]!.events).toEqual(['end']);
  });

  it('marks a recording span failed when the stream breaks, and still ends it', async () => {
    const { tracer, spans } = fakeTracer(true);
    const { core } = fakeCore([chunk('a')], new Error('upstream went away'));
    const router = new TracedRouter(core, tracer);
    await expect(collect(router.stream(ROUTE, OPTIONS))).rejects.toThrow('upstream went away');
    expect(spans[0]!.events).toEqual(['fail: upstream went away', 'end']);
  });
});
