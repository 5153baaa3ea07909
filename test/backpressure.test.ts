// A client that reads a stream slowly holds the upstream back instead of making gw buffer the whole answer:
// back-pressure from the client's socket through the SSE writer, the router's gRPC stream (cluster) and the
// upstream connection. The fake upstream writes as fast as its socket takes bytes and counts them.
import { once } from 'node:events';
import type { ServerResponse } from 'node:http';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { drained } from '@gw/shared';
import {
  type FakeOpenAi,
  type LaunchedGateway,
  scaled,
  startCluster,
  startEmbedded,
  startFakeOpenAi,
  waitFor,
} from '@gw/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// Far more than the kernel's loopback buffers hold (on this machine a receive buffer grows to 32 MB, a send
// buffer to 4 MB, and a cluster has three hops), so a finished upstream can only mean gw buffered it.
const CHUNKS = 6_000;
const PIECE = 'x'.repeat(16_000);
const TOTAL_BYTES = CHUNKS * PIECE.length;

function chunkEvent(): string {
  const chunk = {
    id: 'chatcmpl-large',
    object: 'chat.completion.chunk',
    created: 1,
    model: 'gpt-4o-mini',
    choices: [{ index: 0, delta: { content: PIECE }, finish_reason: null }],
  };
  return `data: ${JSON.stringify(chunk)}\n\n`;
}

const modes = [
  ['embedded', (config: object) => startEmbedded({ config })],
  ['cluster', (config: object) => startCluster({ config })],
] as const;

describe.each(modes)('back-pressure (%s)', (_mode, start) => {
  let fake: FakeOpenAi;
  let gateway: LaunchedGateway;

  beforeAll(async () => {
    fake = await startFakeOpenAi();
    gateway = await start({
      providers: { openai: { keys: [{ value: 'sk-upstream' }], network_config: { base_url: fake.url } } },
    });
  });
  afterAll(async () => {
    await gateway?.close();
    await fake?.close();
  });

  // In a cluster a stream rides the router's lane, held back by the lane's credit, whether it opens the lane (the
  // gateway's first request) or finds it open (after a completion).
  it.each([
    ['as the first request', false],
    ['after a completion', true],
  ])(
    'stops reading the upstream while the client reads nothing, and delivers every byte once it reads (%s)',
    async (_when, warm) => {
      if (warm) {
        const completion = await fetch(`${gateway.url}/v1/chat/completions`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }),
        });
        expect(completion.status).toBe(200);
      }
      const upstream = { written: 0, finished: false };
      fake.enqueue({
        respond: async (response: ServerResponse) => {
          response.writeHead(200, { 'content-type': 'text/event-stream' });
          for (let index = 0; index < CHUNKS; index++) {
            const event = chunkEvent();
            upstream.written += PIECE.length;
            if (!response.write(event)) await drained(response);
            if (response.destroyed) return;
          }
          response.end('data: [DONE]\n\n');
          upstream.finished = true;
        },
      });
      const url = new URL(`${gateway.url}/v1/chat/completions`);
      const answer = await new Promise<IncomingMessage>((resolve, reject) => {
        const sent = httpRequest(
          {
            host: url.hostname,
            port: url.port,
            path: url.pathname,
            method: 'POST',
            headers: { 'content-type': 'application/json' },
          },
          resolve,
        );
        sent.on('error', reject);
        sent.end(
          JSON.stringify({
            model: 'openai/gpt-4o-mini',
            messages: [{ role: 'user', content: 'hi' }],
            stream: true,
          }),
        );
      });
      expect(answer.statusCode).toBe(200);
      // The client reads nothing: the upstream soon stops making progress, far from the end of its answer.
      answer.pause();
      // Held back: the same count of bytes written at three checks in a row, 500 ms apart.
      let last = -1;
      let unchanged = 0;
      await waitFor(
        () => {
          unchanged = upstream.written === last ? unchanged + 1 : 0;
          last = upstream.written;
          return unchanged >= 2;
        },
        { timeoutMs: 20_000, intervalMs: 500, what: 'the upstream held back' },
      );
      expect(upstream.finished).toBe(false);
      expect(upstream.written).toBeLessThan(TOTAL_BYTES * 0.75);

      // Reading again lets everything through, in order.
      const received: Buffer[] = [];
      answer.on('data', (bytes: Buffer) => received.push(bytes));
      answer.resume();
      await once(answer, 'end');
      expect(upstream.finished).toBe(true);
      const text = Buffer.concat(received).toString('utf8');
      expect(text.split(PIECE).length - 1).toBe(CHUNKS);
      expect(text.endsWith('data: [DONE]\n\n')).toBe(true);
    },
    // 96 MB through the gateway (three hops in a cluster) once the client reads: longer on a busy machine.
    scaled(30_000),
  );
});
