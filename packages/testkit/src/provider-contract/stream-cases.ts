import { setTimeout as sleep } from 'node:timers/promises';
import type { ChatCompletionChunk } from '@gw/shared';
import { expect } from 'vitest';
import { scaled } from '../time-scale.ts';
import { PROVIDER_CONTRACT_INPUTS, type ProviderContractOptions } from './contract-options.ts';
import { CANCEL_WAIT_MS, gradualStream } from './contract-upstream.ts';
import { chunkOf, collectChunks, expectUsage, type Harness } from './harness.ts';

/** Streaming: split bytes, incremental delivery and cancellation. */
export function streamCases(harness: Harness, options: ProviderContractOptions): void {
  const { adapter, upstream, expectRequest } = options;
  harness.contractCase(
    'chatStream',
    'chat stream: chunks survive bytes split every 1-7 bytes and end with usage',
    harness.lacks('chat_stream'),
    async () => {
      harness.streamWith(upstream.chatStream);
      const chunks = await collectChunks(
        adapter.chatStream!(harness.chatInput(PROVIDER_CONTRACT_INPUTS.chat), harness.context()),
      );
      expectRequest.chatStream?.(harness.lastRequest());
      expectChatStream(chunks);
    },
  );

  harness.contractCase(
    'chatStreamIncremental',
    'chat stream: yields a chunk before the upstream has finished',
    harness.lacks('chat_stream'),
    async () => {
      const gradual = gradualStream('finish');
      harness.streamWith(upstream.chatStream, gradual.mode);
      const chunks: ChatCompletionChunk[] = [];
      for await (const piece of adapter.chatStream!(
        harness.chatInput(PROVIDER_CONTRACT_INPUTS.chat),
        harness.context(),
      )) {
        gradual.release();
        chunks.push(chunkOf(piece));
      }
      expect(await gradual.outcome, 'a chunk arrived while the upstream still held entries back').toBe(true);
      expectChatStream(chunks);
    },
  );

  harness.contractCase(
    'cancellation',
    'cancellation: aborting the signal ends the stream and closes the upstream response',
    harness.lacks('chat_stream'),
    async () => {
      const gradual = gradualStream('hang');
      harness.streamWith(upstream.chatStream, gradual.mode);
      const iterator = adapter.chatStream!(
        harness.chatInput(PROVIDER_CONTRACT_INPUTS.chat),
        harness.context(),
      )[Symbol.asyncIterator]();
      const first = await iterator.next();
      expect(first.done).toBe(false);
      gradual.release();
      harness.abort();
      const deadline = Date.now() + scaled(CANCEL_WAIT_MS);
      let outcome: 'ended' | 'rejected' | 'timeout' = 'timeout';
      while (Date.now() < deadline) {
        const next = await Promise.race([
          iterator.next().then(
            (result) => (result.done ? ('ended' as const) : ('chunk' as const)),
            () => 'rejected' as const,
          ),
          sleep(deadline - Date.now()).then(() => 'timeout' as const),
        ]);
        if (next !== 'chunk') {
          outcome = next;
          break;
        }
      }
      expect(outcome, 'the stream must end or reject once aborted').not.toBe('timeout');
      const closed = await Promise.race([
        harness.upstream().abandoned.then(() => true),
        sleep(scaled(CANCEL_WAIT_MS)).then(() => false),
      ]);
      expect(closed, 'the fake upstream saw its response closed').toBe(true);
    },
  );
}

/** The normalised stream of the standard chat answer 'Hello thére'. */
function expectChatStream(chunks: ChatCompletionChunk[]): void {
  expect(chunks.length).toBeGreaterThan(0);
  for (const chunk of chunks) expect(chunk.object).toBe('chat.completion.chunk');
  const deltas = chunks.map((chunk) => chunk.choices[0]?.delta);
  expect(deltas.map((delta) => delta?.content ?? '').join('')).toBe('Hello thére');
  const firstRole = deltas.findIndex((delta) => delta?.role === 'assistant');
  const firstContent = deltas.findIndex((delta) => Boolean(delta?.content));
  expect(firstRole, 'a chunk carries role assistant').toBeGreaterThanOrEqual(0);
  expect(firstRole, 'role assistant comes no later than the first content').toBeLessThanOrEqual(firstContent);
  const finishes = chunks.flatMap((chunk) => chunk.choices.map((choice) => choice.finish_reason));
  expect(finishes).toContain('stop');
  const last = chunks.at(-1)!;
  expect(last.choices).toEqual([]);
  expectUsage(last.usage, 10, 5);
}
