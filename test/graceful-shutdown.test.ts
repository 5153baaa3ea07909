// SIGTERM drains (start:cluster stops all services on SIGTERM): what is in flight finishes,
// nothing new is accepted.
import { connect } from 'node:net';
import {
  chatCompletion,
  chatStreamEvents,
  type FakeOpenAi,
  type LaunchedCluster,
  type LaunchedEmbedded,
  scaled,
  startCluster,
  startEmbedded,
  startFakeOpenAi,
  waitFor,
} from '@gw/testkit';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readSse } from './support/http.ts';

const hello = [{ role: 'user', content: 'Say hello' }];

function config(fake: FakeOpenAi) {
  return {
    providers: {
      openai: {
        keys: [{ value: 'sk-upstream-test' }],
        network_config: { base_url: fake.url, max_retries: 0 },
      },
    },
  };
}

/** True when a fresh TCP connection to the port is refused (nothing listens any more). */
function refused(url: string): Promise<boolean> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect({ host: hostname, port: Number(port) });
    socket.setTimeout(1_000);
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code === 'ECONNREFUSED'));
    socket.once('timeout', () => {
      socket.destroy();
      resolve(false);
    });
  });
}

describe('graceful shutdown', () => {
  let fake: FakeOpenAi;
  let cluster: LaunchedCluster | undefined;
  let embedded: LaunchedEmbedded | undefined;

  beforeEach(async () => {
    fake = await startFakeOpenAi();
  });

  afterEach(async () => {
    await cluster?.close();
    await embedded?.close();
    cluster = undefined;
    embedded = undefined;
    await fake.close();
  });

  /** Starts a slow stream (8 events, 200 ms apart: ~1.4 s) and SIGTERMs the launcher at its first chunk. */
  async function streamThroughSigterm(running: LaunchedCluster) {
    const events = chatStreamEvents({ pieces: ['one', ' two', ' three', ' four'] });
    expect(events).toHaveLength(8);
    fake.enqueue({ events, delayMs: 200 });
    const response = await fetch(`${running.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'openai/gpt-4o-mini', messages: hello, stream: true }),
      signal: AbortSignal.timeout(scaled(15_000)),
    });
    expect(response.status).toBe(200);
    let signalled = false;
    let afterSignal = 0;
    const received = await readSse(response, () => {
      if (signalled) afterSignal++;
      else {
        signalled = true;
        running.launcher.kill('SIGTERM');
      }
    });
    return { received, afterSignal, endedAt: performance.now() };
  }

  it('cluster: SIGTERM mid-stream lets the stream finish, then refuses new connections', async () => {
    cluster = await startCluster({ config: config(fake), env: { GW_SHUTDOWN_TIMEOUT_MS: '3000' } });
    const { received, afterSignal } = await streamThroughSigterm(cluster);

    expect(received.at(-1)?.data).toBe('[DONE]');
    const chunks = received.slice(0, -1).map((event) => JSON.parse(event.data) as { choices: unknown[] });
    expect(chunks).toHaveLength(7);
    expect(afterSignal).toBe(7);
    const text = chunks
      .map(
        (chunk) => (chunk.choices[0] as { delta?: { content?: string } } | undefined)?.delta?.content ?? '',
      )
      .join('');
    expect(text).toBe('one two three four');

    // Draining: no new connection is accepted, and every process exits cleanly.
    const stopped = await waitFor(() => refused(cluster!.url), {
      timeoutMs: 3_000,
      what: 'ingress to stop listening',
    });
    expect(stopped).toBe(true);
    expect(await cluster.exited).toBe(0);
    expect(await refused(cluster.adminUrl)).toBe(true);
  });

  it('cluster: the drain ends when the in-flight stream ends, not at the shutdown deadline', async () => {
    // A client that keeps its connection alive after the stream must not hold the drain for the whole deadline.
    cluster = await startCluster({ config: config(fake), env: { GW_SHUTDOWN_TIMEOUT_MS: '5000' } });
    const { received, endedAt } = await streamThroughSigterm(cluster);
    expect(received.at(-1)?.data).toBe('[DONE]');
    expect(await cluster.exited).toBe(0);
    expect(performance.now() - endedAt).toBeLessThan(2_500);
  });

  it('embedded: close() during an in-flight request completes it', async () => {
    embedded = await startEmbedded({ config: config(fake), closeDeadlineMs: 2_000 });
    fake.enqueue({ delayMs: 500, json: chatCompletion({ content: 'finished while draining' }) });
    const pending = fetch(`${embedded.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'openai/gpt-4o-mini', messages: hello }),
      signal: AbortSignal.timeout(scaled(10_000)),
    });
    await waitFor(() => fake.requests.length === 1, { what: 'the upstream call' });
    const closing = embedded.close();
    const stopped = await waitFor(() => refused(embedded!.url), {
      timeoutMs: 2_000,
      what: 'the listener to close',
    });
    expect(stopped).toBe(true);

    const response = await pending;
    expect(response.status).toBe(200);
    const body = (await response.json()) as { choices: Array<{ message: { content: string } }> };
    expect(body.choices[0]?.message.content).toBe('finished while draining');
    await closing;
  });

  it('embedded: close() during a stream lets the stream finish', async () => {
    embedded = await startEmbedded({ config: config(fake), closeDeadlineMs: 2_000 });
    fake.enqueue({ events: chatStreamEvents({ pieces: ['a', 'b', 'c'] }), delayMs: 150 });
    const response = await fetch(`${embedded.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'openai/gpt-4o-mini', messages: hello, stream: true }),
      signal: AbortSignal.timeout(scaled(10_000)),
    });
    let closing: Promise<void> | undefined;
    const received = await readSse(response, () => {
      closing ??= embedded!.close();
    });
    expect(received.at(-1)?.data).toBe('[DONE]');
    expect(received).toHaveLength(7);
    await closing;
  });

  it('embedded: close() resolves once the in-flight request is answered, not at the deadline', async () => {
    embedded = await startEmbedded({ config: config(fake), closeDeadlineMs: 3_000 });
    fake.enqueue({ delayMs: 300, json: chatCompletion() });
    const pending = fetch(`${embedded.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'openai/gpt-4o-mini', messages: hello }),
      signal: AbortSignal.timeout(scaled(10_000)),
    });
    await waitFor(() => fake.requests.length === 1, { what: 'the upstream call' });
    const closing = embedded.close();
    const response = await pending;
    await response.text();
    const answeredAt = performance.now();
    await closing;
    // The caller's keep-alive connection is idle now; it must not hold the drain until the 3 s deadline.
    expect(performance.now() - answeredAt).toBeLessThan(1_000);
  });
});
