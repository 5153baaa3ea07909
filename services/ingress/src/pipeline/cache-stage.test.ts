// The cache stage inside the real pipeline (settle outside it), with a scripted router whose embeddings the
// test controls, the memory backend and a clock the test moves: exact and semantic hits, thresholds, scopes,
// TTL, streams both ways, what is never stored, and what settlement is told (a hit is free, the embedding not).
import { GatewayError, type Message } from '@gw/shared';
import { chunkAnswer, waitFor } from '@gw/testkit';
import { describe, expect, it } from 'vitest';
import { completion, cacheStageHarness as setup, USAGE } from '../testing/cache-stage-harness.ts';
import { cacheScope } from './cache-stage.ts';

const ask = (content: string): Message[] => [{ role: 'user', content }];

describe('cache stage', () => {
  it('answers an exact repeat from the cache, whatever the order of JSON keys, with no provider call', async () => {
    const { complete, completions, stored, settles } = setup({ types: ['exact'] });
    const first = await complete(ask('hi'), { params: { temperature: 0, top_p: 1 } });
    expect(first.headers).toEqual({ 'x-gw-cache': 'miss' });
    expect(first.result.response.extra_fields['cache']).toEqual({ status: 'miss' });
    await stored(1);
    const second = await complete(ask('hi'), { params: { top_p: 1, temperature: 0 } });
    expect(completions).toHaveLength(1);
    expect(second.headers).toMatchObject({ 'x-gw-cache': 'hit', 'x-gw-cache-hit-type': 'exact' });
    expect(second.result.response.choices[0]).toMatchObject({ message: { content: 'fresh' } });
    expect(second.result.response.usage).toEqual({ prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 });
    // The earlier call's raw body is not an answer to this one: it is not stored.
    expect(second.result.response.extra_fields.raw_response).toBeUndefined();
    expect(second.result.response.extra_fields['cache']).toEqual({
      status: 'hit',
      type: 'exact',
      similarity: 1,
      entry_id: second.headers['x-gw-cache-entry-id'],
    });
    await waitFor(() => settles.length === 2);
    expect(settles[1]).toMatchObject({ usage: { total_tokens: 0 } });
    expect(settles[1]!.calls).toBeUndefined();
    // Another param is another answer.
    await complete(ask('hi'), { params: { temperature: 1, top_p: 1 } });
    expect(completions).toHaveLength(2);
  });

  it('matches a similar question above the threshold, and charges the embedding instead of the answer', async () => {
    const { complete, completions, embeddings, vectors, stored, settles } = setup();
    vectors.set('user: capital of France?', [1, 0, 0]);
    vectors.set('user: which city is the capital of France?', [0.95, 0.1, 0]);
    vectors.set('user: how tall is the Eiffel tower?', [0.5, 0.8, 0]);
    await complete(ask('capital of France?'));
    await stored(1);
    const near = await complete(ask('which city is the capital of France?'));
    expect(completions).toHaveLength(1);
    expect(embeddings).toHaveLength(2);
    expect(embeddings[1]).toMatchObject({ targets: [{ provider: 'embedder', model: 'embed-small' }] });
    expect(near.headers).toMatchObject({ 'x-gw-cache': 'hit', 'x-gw-cache-hit-type': 'semantic' });
    expect(Number(near.headers['x-gw-cache-similarity'])).toBeGreaterThan(0.99);
    await waitFor(() => settles.length === 2);
    const embedding = {
      provider: 'embedder',
      model: 'embed-small',
      usage: { prompt_tokens: 4, total_tokens: 4 },
    };
    expect(settles[0]).toMatchObject({ usage: USAGE, calls: [embedding] });
    expect(settles[1]).toMatchObject({ usage: { total_tokens: 0 }, calls: [embedding] });
    // Below the threshold (cosine 0.53): a miss, served by the provider.
    const far = await complete(ask('how tall is the Eiffel tower?'));
    expect(far.headers).toEqual({ 'x-gw-cache': 'miss' });
    expect(completions).toHaveLength(2);
    // A request may ask for a stricter threshold.
    await stored(2);
    await complete(ask('which city is the capital of France?'), {
      headers: { 'x-gw-cache-threshold': '0.999' },
    });
    expect(completions).toHaveLength(3);
  });

  it('never serves across virtual keys, unless the config shares one scope', async () => {
    const isolated = setup({ types: ['exact'] });
    await isolated.complete(ask('hi'), { headers: { 'x-gw-vk': 'sk-gw-alice' } });
    await isolated.stored(1);
    const bob = await isolated.complete(ask('hi'), { headers: { 'x-gw-vk': 'sk-gw-bob' } });
    expect(bob.headers['x-gw-cache']).toBe('miss');
    const alice = await isolated.complete(ask('hi'), { headers: { 'x-gw-vk': 'sk-gw-alice' } });
    expect(alice.headers['x-gw-cache']).toBe('hit');

    const shared = setup({ types: ['exact'], scope_by_virtual_key: false });
    await shared.complete(ask('hi'), { headers: { 'x-gw-vk': 'sk-gw-alice' } });
    await shared.stored(1);
    expect(
      (await shared.complete(ask('hi'), { headers: { 'x-gw-vk': 'sk-gw-bob' } })).headers['x-gw-cache'],
    ).toBe('hit');
    expect(cacheScope({ targets: [], virtualKeyId: 'k1' }, true)).toBe('vk:k1');
    expect(cacheScope({ targets: [] }, true)).toBe('anonymous');
    expect(cacheScope({ targets: [], virtualKeyId: 'k1' }, false)).toBe('global');
  });

  it('caches no caller without a virtual key unless the config says so', async () => {
    const closed = setup({ types: ['exact'] });
    const planted = { anonymous: true, headers: { 'x-gw-cache-key': 'weather' } };
    const first = await closed.complete(ask('Is it raining? Say yes.'), planted);
    expect(first.headers).toEqual({});
    const victim = await closed.complete(ask('Is it raining?'), planted);
    expect(victim.headers).toEqual({});
    expect(closed.completions).toHaveLength(2);
    expect((await closed.metrics.cacheStores.get()).values).toHaveLength(0);
    await closed.complete(ask('same'), { anonymous: true });
    expect((await closed.complete(ask('same'), { anonymous: true })).headers).toEqual({});
    expect(closed.completions).toHaveLength(4);
  });

  it('with cache.anonymous, lets anonymous callers match exactly only, with no key of their own and no longer TTL', async () => {
    const open = setup({ anonymous: true, ttl_ms: 60_000 });
    open.vectors.set('user: Is it raining?', [1, 0]);
    open.vectors.set('user: Is it raining? Answer only: no.', [0.99, 0.01]);
    // A key of its own would let it answer someone else's question: refused, before any upstream call.
    await expect(
      open.complete(ask('x'), { anonymous: true, headers: { 'x-gw-cache-key': 'weather' } }),
    ).rejects.toMatchObject({ type: 'invalid_request', param: 'x-gw-cache-key' });
    expect(open.completions).toHaveLength(0);
    // A crafted near-duplicate is stored, but never found semantically (no embedding is even made).
    await open.complete(ask('Is it raining? Answer only: no.'), {
      anonymous: true,
      headers: { 'x-gw-cache-ttl': '24h' },
    });
    await open.stored(1);
    const victim = await open.complete(ask('Is it raining?'), { anonymous: true });
    expect(victim.headers['x-gw-cache']).toBe('miss');
    expect(open.embeddings).toHaveLength(0);
    // An exact repeat is served, for at most the configured TTL though a day was asked.
    await open.stored(2);
    expect((await open.complete(ask('Is it raining?'), { anonymous: true })).headers['x-gw-cache']).toBe(
      'hit',
    );
    open.clock.now += 60_001;
    expect((await open.complete(ask('Is it raining?'), { anonymous: true })).headers['x-gw-cache']).toBe(
      'miss',
    );
    expect(
      (await open.complete(ask('Is it raining? Answer only: no.'), { anonymous: true })).headers[
        'x-gw-cache'
      ],
    ).toBe('miss');
    // A caller with a virtual key keeps everything.
    await open.complete(ask('mine'), { headers: { 'x-gw-cache-key': 'k', 'x-gw-cache-ttl': '24h' } });
    await open.stored(3);
    open.clock.now += 3_600_000;
    expect(
      (await open.complete(ask('other'), { headers: { 'x-gw-cache-key': 'k' } })).headers['x-gw-cache'],
    ).toBe('hit');
  });

  it('forgets an entry when its TTL (configured, or the request’s) has passed', async () => {
    const { complete, clock, stored } = setup({ types: ['exact'], ttl_ms: 60_000 });
    await complete(ask('configured'));
    await complete(ask('asked'), { headers: { 'x-gw-cache-ttl': '5s' } });
    await stored(2);
    clock.now += 5_001;
    expect((await complete(ask('configured'))).headers['x-gw-cache']).toBe('hit');
    expect((await complete(ask('asked'))).headers['x-gw-cache']).toBe('miss');
    clock.now += 60_000;
    expect((await complete(ask('configured'))).headers['x-gw-cache']).toBe('miss');
  });

  it('stores a stream once it ended, and replays it chunk by chunk, or whole', async () => {
    const { stream, complete, completions, stored } = setup({ types: ['exact'] });
    const first = await stream(ask('stream me'));
    expect(first.headers['x-gw-cache']).toBe('miss');
    expect(first.items[0]!.chunk.extra_fields).toMatchObject({ cache: { status: 'miss' } });
    await stored(1);
    const replay = await stream(ask('stream me'));
    expect(completions).toHaveLength(1);
    expect(replay.items[0]!.provider).toBe('openai');
    expect(replay.items.map((item) => item.chunk.choices[0]?.delta?.content)).toEqual([
      '',
      'Hel',
      'lo',
      undefined,
      undefined,
    ]);
    expect(replay.items.at(-1)!.chunk.usage).toEqual({
      prompt_tokens: 0,
      completion_tokens: 0,
      total_tokens: 0,
    });
    const whole = await complete(ask('stream me'));
    expect(whole.result.response.choices[0]).toMatchObject({
      message: { content: 'Hello' },
      finish_reason: 'stop',
    });
    // A whole answer replayed as a stream.
    await complete(ask('whole first'));
    await stored(2);
    const streamed = await stream(ask('whole first'));
    expect(streamed.items.map((item) => item.chunk.choices[0]?.delta?.content).join('')).toBe('fresh');
    expect(completions).toHaveLength(2);
  });

  it('never stores errors, partial answers, failed, unfinished or abandoned streams, nor what asks not to be', async () => {
    const { complete, stream, answers, streams, completions, metrics, stored } = setup({ types: ['exact'] });
    answers.push(new GatewayError({ type: 'upstream_error', message: 'boom' }));
    await expect(complete(ask('error'))).rejects.toThrow('boom');
    answers.push(completion('cut', null));
    await complete(ask('partial'));
    await complete(ask('private'), { headers: { 'x-gw-cache-no-store': 'true' } });
    streams.push(new GatewayError({ type: 'upstream_error', message: 'stream failed' }));
    await expect(stream(ask('failed stream'))).rejects.toThrow('stream failed');
    const unfinished = chunkAnswer(['a']).chunks.slice(0, 2);
    streams.push(unfinished);
    await stream(ask('unfinished stream'));
    await stream(ask('abandoned stream'), { readOnly: 2 });
    await stored(3);
    const outcomes = Object.fromEntries(
      (await metrics.cacheStores.get()).values.map(({ labels, value }) => [labels.outcome, value]),
    );
    expect(outcomes).toEqual({ refused: 2, skipped: 1 });
    const before = completions.length;
    for (const question of [
      'error',
      'partial',
      'private',
      'failed stream',
      'unfinished stream',
      'abandoned stream',
    ]) {
      answers.push(completion('again'));
      expect((await complete(ask(question))).headers['x-gw-cache']).toBe('miss');
    }
    expect(completions.length).toBe(before + 6);
  });

  it('matches long conversations, tool results and failed embeddings exactly only', async () => {
    const { complete, embeddings, vectors } = setup({ max_turns: 2 });
    vectors.set('user: a', [1, 0]);
    const long: Message[] = [
      { role: 'user', content: 'a' },
      { role: 'assistant', content: 'b' },
      { role: 'user', content: 'c' },
    ];
    await complete(long);
    const withTool: Message[] = [
      { role: 'user', content: 'a' },
      { role: 'tool', content: '{}', tool_call_id: 'x' },
    ];
    await complete(withTool);
    expect(embeddings).toHaveLength(0);
    // The embedding upstream fails: the request is served all the same.
    const failed = await complete(ask('no vector for me'));
    expect(embeddings).toHaveLength(1);
    expect(failed.result.response.choices[0]).toMatchObject({ message: { content: 'fresh' } });
  });

  it('refuses a malformed cache header, or a type the config does not allow, with a 400 naming it', async () => {
    const { complete, completions } = setup({ types: ['exact'] });
    await expect(complete(ask('x'), { headers: { 'x-gw-cache-ttl': 'soon' } })).rejects.toMatchObject({
      type: 'invalid_request',
      param: 'x-gw-cache-ttl',
    });
    await expect(complete(ask('x'), { headers: { 'x-gw-cache-type': 'semantic' } })).rejects.toMatchObject({
      type: 'invalid_request',
      param: 'x-gw-cache-type',
    });
    expect(completions).toHaveLength(0);
  });
});
