// Streaming (SSE), cancellation when the client leaves, upstream timeouts, request ids.
import { connect } from 'node:net';
import { chatCompletion, chatStreamEvents, scaled, waitFor } from '@gw/testkit';
import { describe, expect, it } from 'vitest';
import { type Json, post, readSse } from '../support/http.ts';
import { hello, type ModeContext, requests } from './context.ts';

export function streamingCases(mode: ModeContext): void {
  const { chat, streamChat } = requests(mode);

  describe('streaming', () => {
    it('answers SSE chunks with usage in the last chunk before [DONE]', async () => {
      const response = await fetch(`${mode.base}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'openai/gpt-4o-mini', messages: hello, stream: true }),
        signal: AbortSignal.timeout(scaled(10_000)),
      });
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
      const events = await readSse(response);

      expect(events.at(-1)?.data).toBe('[DONE]');
      const chunks = events.slice(0, -1).map((event) => JSON.parse(event.data) as Json);
      expect(chunks.length).toBeGreaterThanOrEqual(3);
      for (const chunk of chunks) expect(chunk.object).toBe('chat.completion.chunk');
      const text = chunks.map((chunk) => chunk.choices[0]?.delta?.content ?? '').join('');
      expect(text).toBe('Hello wörld');
      expect(chunks.at(-1).usage).toEqual({ prompt_tokens: 9, completion_tokens: 3, total_tokens: 12 });

      const upstream = mode.fakes.primary.last().body as Json;
      expect(upstream.stream).toBe(true);
      expect(upstream.stream_options).toEqual({ include_usage: true });
      expect(upstream.model).toBe('gpt-4o-mini');
    });

    it('honours Connection: close on a stream, and keeps the connection otherwise', async () => {
      const body = JSON.stringify({ model: 'openai/gpt-4o-mini', messages: hello, stream: true });
      const exchange = (connection: string) =>
        new Promise<{ head: string; closed: boolean }>((resolve, reject) => {
          const { hostname, port } = new URL(mode.gateway.url);
          const socket = connect({ host: hostname, port: Number(port) });
          let received = '';
          socket.setEncoding('utf8');
          socket.on('error', reject);
          const finish = (closed: boolean) => {
            socket.destroy();
            resolve({ head: received.slice(0, received.indexOf('\r\n\r\n')).toLowerCase(), closed });
          };
          socket.on('data', (text: string) => {
            received += text;
            // Kept open: the answer is whole once [DONE] came; wait a moment to see it is not closed.
            if (received.includes('[DONE]')) setTimeout(() => finish(false), 300);
          });
          socket.on('close', () => finish(true));
          socket.write(
            `POST /v1/chat/completions HTTP/1.1\r\nHost: ${hostname}\r\nContent-Type: application/json\r\n` +
              `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: ${connection}\r\n\r\n${body}`,
          );
        });
      const closing = await exchange('close');
      expect(closing.head).toContain('connection: close');
      expect(closing.closed).toBe(true);
      const kept = await exchange('keep-alive');
      expect(kept.head).toContain('connection: keep-alive');
      expect(kept.closed).toBe(false);
    });

    it('delivers each chunk as it arrives, not at the end', async () => {
      mode.fakes.primary.enqueue({
        events: chatStreamEvents({ pieces: ['a', 'b', 'c', 'd'] }),
        delayMs: 300,
      });
      const response = await fetch(`${mode.base}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'openai/gpt-4o-mini', messages: hello, stream: true }),
        signal: AbortSignal.timeout(scaled(15_000)),
      });
      const events = await readSse(response);
      expect(events.length).toBeGreaterThanOrEqual(5);
      expect(events.at(-1)?.data).toBe('[DONE]');
      const first = events[0]!;
      const done = events.at(-1)!;
      // The upstream spends ~2.1 s between its first and last event: buffering would collapse the gap.
      expect(done.at - first.at).toBeGreaterThanOrEqual(600);
    });

    it('cancels the upstream request when the client goes away', async () => {
      const abortedBefore = mode.fakes.primary.abortedCount;
      mode.fakes.primary.enqueue({ events: chatStreamEvents().slice(0, 2), hangAfter: true });
      const controller = new AbortController();
      const response = await fetch(`${mode.base}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'openai/gpt-4o-mini', messages: hello, stream: true }),
        signal: controller.signal,
      });
      expect(response.status).toBe(200);
      const reader = (response.body as ReadableStream<Uint8Array>).getReader();
      const first = await reader.read();
      expect(new TextDecoder().decode(first.value)).toContain('chat.completion.chunk');
      controller.abort();
      await reader.cancel().catch(() => {});
      await waitFor(() => mode.fakes.primary.abortedCount > abortedBefore, {
        timeoutMs: 5_000,
        what: 'the upstream request to be cancelled',
      });
    });

    it('retries a stream that fails before its first chunk', async () => {
      mode.fakes.primary.enqueue({ status: 500, json: { error: { message: 'try again' } } });
      const response = await streamChat({ model: 'openai/gpt-4o-mini', messages: hello, stream: true });
      expect(response.status).toBe(200);
      const events = await readSse(response);
      expect(events.at(-1)?.data).toBe('[DONE]');
      expect(mode.fakes.primary.requests).toHaveLength(2);
    });

    it('answers a JSON error when the stream fails before it starts', async () => {
      mode.fakes.primary.enqueue({ status: 400, json: { error: { message: 'stream refused upstream' } } });
      const response = await streamChat({ model: 'openai/gpt-4o-mini', messages: hello, stream: true });
      expect(response.status).toBe(400);
      expect(response.headers.get('content-type')).toMatch(/^application\/json/);
      const body = (await response.json()) as Json;
      expect(body).toMatchObject({
        error: { type: 'upstream_error', message: 'stream refused upstream' },
        status_code: 400,
        is_gateway_error: false,
      });
      expect(mode.fakes.primary.requests).toHaveLength(1);
    });

    it('ends with an error event, not [DONE], when the upstream fails mid-stream', async () => {
      const events = chatStreamEvents();
      mode.fakes.primary.enqueue({
        events: [events[0]!, events[1]!, JSON.stringify({ error: { message: 'overloaded mid-stream' } })],
      });
      const response = await streamChat({ model: 'openai/gpt-4o-mini', messages: hello, stream: true });
      expect(response.status).toBe(200);
      const received = await readSse(response);
      expect(received.map((event) => event.data)).not.toContain('[DONE]');
      expect(JSON.parse(received[0]!.data).object).toBe('chat.completion.chunk');
      const last = JSON.parse(received.at(-1)!.data) as Json;
      expect(last.error).toMatchObject({ message: 'overloaded mid-stream' });
      expect(last.error.type).toEqual(expect.any(String));
    });

    it('streams text completions', async () => {
      const response = await fetch(`${mode.base}/v1/text/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'openai/gpt-3.5-turbo-instruct', text: 'Once', stream: true }),
        signal: AbortSignal.timeout(scaled(10_000)),
      });
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
      const events = await readSse(response);
      expect(events.at(-1)?.data).toBe('[DONE]');
      const chunks = events.slice(0, -1).map((event) => JSON.parse(event.data) as Json);
      expect(chunks.map((chunk) => chunk.choices[0]?.text ?? '').join('')).toBe('Once upon');
      expect(chunks.at(-1).usage).toMatchObject({ total_tokens: 5 });
      const upstream = mode.fakes.primary.last();
      expect(upstream.path).toBe('/v1/completions');
      expect(upstream.body).toMatchObject({
        prompt: 'Once',
        stream: true,
        stream_options: { include_usage: true },
      });
    });

    it('falls back to another target for a stream', async () => {
      mode.fakes.primary.enqueue({ status: 400, json: { error: { message: 'no' } } });
      const response = await streamChat({
        model: 'openai/gpt-4o-mini',
        messages: hello,
        stream: true,
        fallbacks: ['openai-backup/gpt-4o-mini'],
      });
      expect(response.status).toBe(200);
      const events = await readSse(response);
      expect(events.at(-1)?.data).toBe('[DONE]');
      expect(mode.fakes.backup.requests).toHaveLength(1);
      expect(mode.fakes.backup.last().body).toMatchObject({ stream: true });
    });
  });

  describe('cancellation and timeouts', () => {
    it('cancels a slow non-streaming upstream call when the client goes away', async () => {
      const abortedBefore = mode.fakes.primary.abortedCount;
      mode.fakes.primary.enqueue({ delayMs: 3_000, json: chatCompletion() });
      const controller = new AbortController();
      const pending = fetch(`${mode.base}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'openai/gpt-4o-mini', messages: hello }),
        signal: controller.signal,
      }).catch((error: unknown) => error);
      await waitFor(() => mode.fakes.primary.requests.length === 1, { what: 'the upstream call' });
      controller.abort();
      await pending;
      await waitFor(() => mode.fakes.primary.abortedCount > abortedBefore, {
        timeoutMs: 2_000,
        what: 'the upstream request to be cancelled',
      });
    });

    it('answers 504 upstream_timeout when the upstream is slower than timeout_ms', async () => {
      mode.fakes.backup.enqueue({ delayMs: 1_500, json: chatCompletion() });
      const started = performance.now();
      const answer = await chat({ model: 'slow/gpt-4o-mini', messages: hello });
      expect(performance.now() - started).toBeLessThan(1_400);
      expect(answer.status).toBe(504);
      expect(answer.body.error.type).toBe('upstream_timeout');
      expect(answer.body.request_id).toEqual(expect.any(String));
    });

    it('echoes the caller x-request-id', async () => {
      const answer = await post(
        `${mode.base}/v1/chat/completions`,
        { model: 'openai/gpt-4o-mini', messages: hello },
        { headers: { 'x-request-id': 'caller-chose-this-1' } },
      );
      expect(answer.status).toBe(200);
      expect(answer.headers.get('x-request-id')).toBe('caller-chose-this-1');
      const failed = await post(
        `${mode.base}/v1/chat/completions`,
        { model: 'gpt-4o', messages: hello },
        { headers: { 'x-request-id': 'caller-chose-this-2' } },
      );
      expect(failed.body.request_id).toBe('caller-chose-this-2');
    });
  });
}
