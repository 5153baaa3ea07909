import { expect } from 'vitest';
import { answerAsChunks, answerAsResponse } from '../../cache/src/index.ts';
import { base, type CaseContext, keysOf, unique } from './cache-contract-helpers.ts';
import { chunkAnswer, wholeAnswer } from './cache-fixtures.ts';

/** What is stored, and how it is served back. */
export function answerCases({ contractCase, open }: CaseContext): void {
  contractCase('a stored stream replays chunk by chunk, in order, and as a whole answer', async () => {
    const cache = await open();
    const scope = unique('key');
    const [streamed, whole] = [keysOf('stream me'), keysOf('whole')];
    const chunks = chunkAnswer(['Once', ' upon', ' a', ' time']);
    await cache.store({ ...base(scope, streamed), answer: chunks });
    const hit = await cache.lookup({ scope, hash: streamed.exact });
    expect(hit && answerAsChunks(hit.entry.answer)).toEqual(chunks.chunks);
    const assembled = hit && answerAsResponse(hit.entry.answer, hit.entry.provider);
    expect(assembled?.choices[0]).toMatchObject({
      message: { content: 'Once upon a time' },
      finish_reason: 'stop',
    });
    await cache.store({ ...base(scope, whole), answer: wholeAnswer('All at once.') });
    const wholeHit = await cache.lookup({ scope, hash: whole.exact });
    const replay = wholeHit ? answerAsChunks(wholeHit.entry.answer) : [];
    expect(replay.map((chunk) => chunk.choices[0]?.delta?.content ?? null)).toEqual([
      'All at once.',
      null,
      null,
    ]);
    expect(answerAsResponse({ kind: 'chunks', chunks: replay }, 'openai')).toEqual(
      wholeAnswer('All at once.').response,
    );
  });

  contractCase('errors and partial answers are refused and never found', async () => {
    const cache = await open();
    const scope = unique('key');
    const keys = keysOf('will fail');
    const error = { error: { type: 'upstream_error', message: 'boom' }, status_code: 502 };
    const cut = chunkAnswer(['half an']);
    cut.chunks = cut.chunks.filter((chunk) => chunk.choices[0]?.finish_reason == null && chunk.usage == null);
    const unfinished = wholeAnswer('no end');
    unfinished.response.choices[0]!.finish_reason = null;
    for (const answer of [error, new Error('boom'), cut, unfinished, undefined]) {
      expect(await cache.store({ ...base(scope, keys), answer })).toMatchObject({
        stored: false,
        reason: 'not_storable',
      });
    }
    expect(await cache.lookup({ scope, hash: keys.exact })).toBeUndefined();
    expect(cache.stats()).toMatchObject({ refused: 5, stores: 0 });
  });
}
