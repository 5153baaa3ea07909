// writeSse on a real node:http server and client: the events that arrive in one turn of the event loop go out as
// one write, later ones as they come, and what the client reads is every event in order, then the end mark.
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { StreamItem } from '@gw/router';
import { createMetrics, GatewayError } from '@gw/shared';
import { capturedLogger } from '@gw/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import type { RequestContext } from './route.ts';
import { OPENAI_SSE, type SseFraming, writeSse } from './sse-writer.ts';

const item = (content: string): StreamItem => ({
  chunk: {
    id: 'c',
    object: 'chat.completion.chunk',
    created: 1,
    model: 'm',
    choices: [{ index: 0, delta: { content }, finish_reason: null }],
  },
});

const context = (): RequestContext => ({
  requestId: 'req_sse',
  route: '/v1/chat/completions',
  path: '/v1/chat/completions',
  wildcard: '',
  startedAt: performance.now(),
  provider: '',
});

let server: Server | undefined;
afterEach(async () => {
  await new Promise((resolve) => server?.close(resolve));
  server = undefined;
});

/** Serves one stream of `items` through writeSse; the writes the response was asked for, and the body read. */
async function serve(items: () => AsyncIterable<StreamItem>, framing: SseFraming = OPENAI_SSE) {
  const writes: Array<string | Uint8Array> = [];
  const metrics = createMetrics({ service: 'test', defaultMetrics: false });
  const { logger } = capturedLogger();
  server = createServer((_request, response: ServerResponse) => {
    const write = response.write.bind(response) as (chunk: string | Uint8Array) => boolean;
    response.write = ((chunk: string | Uint8Array) => {
      writes.push(chunk);
      return write(chunk);
    }) as typeof response.write;
    void writeSse({ response, items: items(), context: context(), framing, metrics, logger });
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const answer = await fetch(`http://127.0.0.1:${port}/`);
  return { writes, status: answer.status, body: await answer.text() };
}

describe('writeSse', () => {
  it('writes the events of one turn together and later ones as they come, then the end mark', async () => {
    const { writes, status, body } = await serve(async function* () {
      // Three events ready at once (one upstream read), then one after a timer (the next read).
      yield item('a');
      yield item('b');
      yield item('c');
      await new Promise((resolve) => setTimeout(resolve, 20));
      yield item('d');
    });
    expect(status).toBe(200);
    const events = ['a', 'b', 'c', 'd'].map((text) => OPENAI_SSE.event(item(text)));
    expect(body).toBe(`${events.join('')}data: [DONE]\n\n`);
    // The first three in one write; the fourth went out with the end.
    expect(writes).toEqual([events.slice(0, 3).join('')]);
  });

  it('joins events a framing made as bytes with text ones, in order', async () => {
    const framing: SseFraming = {
      event: (streamed) => Buffer.from(`bytes:${streamed.chunk.choices[0]?.delta?.content}\n`),
      end: 'end\n',
      error: () => 'error\n',
    };
    const { writes, body } = await serve(async function* () {
      yield item('x');
      yield item('y');
    }, framing);
    expect(body).toBe('bytes:x\nbytes:y\nend\n');
    expect(writes).toEqual([]);
  });

  it('ends a stream that fails after it started with the events before the failure, then the error event', async () => {
    const { body } = await serve(async function* () {
      yield item('a');
      throw new GatewayError({ type: 'upstream_error', status: 502, message: 'cut' });
    });
    expect(body).toBe(
      `${OPENAI_SSE.event(item('a'))}data: ${JSON.stringify({ error: { type: 'upstream_error', message: 'cut', code: null, param: null }, status_code: 502 })}\n\n`,
    );
  });
});
