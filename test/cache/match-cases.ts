// Exact and semantic matches through /v1/chat/completions: what reached the upstreams, the answer, the
// headers and extra_fields.cache; a hit written through one ingress served by the other; key isolation; TTL.
import { scaled, untilClockPasses } from '@gw/testkit';
import { describe, expect, it } from 'vitest';
import { post } from '../support/http.ts';
import { ask, type CacheContext, helpers, KEYS } from './context.ts';

export function matchCases(context: CacheContext): void {
  const { chat, andStored, asHit } = helpers(context);
  const writer = () => context.gateway.url;

  describe('matches', () => {
    it('answers an exact repeat from the cache, on another replica, without calling any upstream', async () => {
      const { chat: upstream, embeddings } = context.fakes;
      const question = { ...ask('Say hello'), temperature: 0, max_tokens: 40 };
      const miss = await andStored(() => chat(writer(), KEYS.alice, question));
      expect(miss.status).toBe(200);
      expect(miss.headers.get('x-gw-cache')).toBe('miss');
      expect(miss.body.extra_fields.cache).toEqual({ status: 'miss' });
      expect(upstream.requests).toHaveLength(1);
      // A short conversation is embedded for semantic matching: one call, on the embedding model.
      expect(embeddings.requests).toHaveLength(1);
      expect(embeddings.last().body).toEqual({ model: 'embed-small', input: 'user: Say hello' });

      // The same request with its JSON keys in another order, on the other ingress.
      const reordered = {
        max_tokens: 40,
        temperature: 0,
        messages: question.messages,
        model: question.model,
      };
      const hit = await asHit(() => chat(context.reader, KEYS.alice, reordered));
      expect(hit.status).toBe(200);
      expect(hit.headers.get('x-gw-cache')).toBe('hit');
      expect(hit.headers.get('x-gw-cache-hit-type')).toBe('exact');
      expect(hit.headers.get('x-gw-cache-similarity')).toBe('1.0000');
      const entryId = hit.headers.get('x-gw-cache-entry-id');
      expect(entryId).toMatch(/^[\w-]+$/);
      expect(hit.body.choices).toEqual(miss.body.choices);
      expect(hit.body.usage).toEqual({ prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 });
      expect(hit.body.extra_fields.cache).toEqual({
        status: 'hit',
        type: 'exact',
        similarity: 1,
        entry_id: entryId,
      });
      // An exact hit needs no embedding.
      expect(embeddings.requests).toHaveLength(1);
    });

    it('matches a similar question above the threshold with one embedding call, and misses below it', async () => {
      const { chat: upstream, embeddings } = context.fakes;
      embeddings.vectors.set('user: What is the capital of France?', [1, 0]);
      embeddings.vectors.set('user: Which city is the capital of France?', [0.9, 0.1]);
      embeddings.vectors.set('user: How tall is the Eiffel Tower?', [0.6, 0.8]);
      await andStored(() => chat(writer(), KEYS.alice, ask('What is the capital of France?')));
      const chats = upstream.requests.length;
      const embeds = embeddings.requests.length;

      const near = await asHit(() =>
        chat(context.reader, KEYS.alice, ask('Which city is the capital of France?')),
      );
      expect(near.headers.get('x-gw-cache-hit-type')).toBe('semantic');
      expect(Number(near.headers.get('x-gw-cache-similarity'))).toBeCloseTo(0.9939, 3);
      expect(near.body.extra_fields.cache).toMatchObject({ status: 'hit', type: 'semantic' });
      expect(upstream.requests.length).toBe(chats);
      expect(embeddings.requests.length).toBe(embeds + 1);

      // Cosine 0.6 is below the default 0.8: the provider answers.
      const far = await chat(context.reader, KEYS.alice, ask('How tall is the Eiffel Tower?'));
      expect(far.headers.get('x-gw-cache')).toBe('miss');
      expect(upstream.requests.length).toBe(chats + 1);
      // A request may ask for more similarity than 0.9939.
      const strict = await chat(context.reader, KEYS.alice, ask('Which city is the capital of France?'), {
        'x-gw-cache-threshold': '0.999',
        'x-gw-cache-no-store': 'true',
      });
      expect(strict.headers.get('x-gw-cache')).toBe('miss');
      expect(upstream.requests.length).toBe(chats + 2);
    });

    it('never serves one virtual key what another stored', async () => {
      const { chat: upstream } = context.fakes;
      await andStored(() => chat(writer(), KEYS.alice, ask('A secret of Alice')));
      await asHit(() => chat(context.reader, KEYS.alice, ask('A secret of Alice')));
      const chats = upstream.requests.length;
      const bob = await chat(context.reader, KEYS.bob, ask('A secret of Alice'));
      expect(bob.headers.get('x-gw-cache')).toBe('miss');
      expect(upstream.requests.length).toBe(chats + 1);
    });

    it('caches no caller without a virtual key: the shared anonymous scope cannot be planted', async () => {
      const { chat: upstream } = context.fakes;
      const anonymous = (base: string, content: string) =>
        post(`${base}/v1/chat/completions`, ask(content), {
          headers: { 'x-gw-cache-key': 'todays-weather', 'x-gw-cache-ttl': '24h' },
        });
      const planted = await anonymous(writer(), 'Say that it is sunny');
      expect(planted.status).toBe(200);
      expect(planted.headers.get('x-gw-cache')).toBeNull();
      const chats = upstream.requests.length;
      const victim = await anonymous(context.reader, 'What is the weather?');
      expect(victim.status).toBe(200);
      expect(victim.headers.get('x-gw-cache')).toBeNull();
      expect(upstream.requests.length).toBe(chats + 1);
    });

    it('forgets an entry once its TTL (here the request’s) has passed', async () => {
      const { chat: upstream } = context.fakes;
      // Long enough for the hit to be asked on a busy machine; the wait ends past it whatever that took.
      const ttlMs = scaled(1_500);
      const shortLived = { 'x-gw-cache-ttl': `${ttlMs}ms`, 'x-gw-cache-type': 'exact' };
      await andStored(() => chat(writer(), KEYS.alice, ask('Briefly true'), shortLived));
      const storedBy = Date.now();
      await asHit(() => chat(context.reader, KEYS.alice, ask('Briefly true'), shortLived));
      await untilClockPasses(storedBy + ttlMs + 100);
      const chats = upstream.requests.length;
      const late = await chat(context.reader, KEYS.alice, ask('Briefly true'), shortLived);
      expect(late.headers.get('x-gw-cache')).toBe('miss');
      expect(upstream.requests.length).toBe(chats + 1);
    });

    it('matches conversations with tool results exactly only, and refuses a malformed cache header', async () => {
      const { embeddings } = context.fakes;
      const embeds = embeddings.requests.length;
      const withTool = {
        model: 'openai/gpt-4o-mini',
        messages: [
          { role: 'user', content: 'Weather?' },
          {
            role: 'assistant',
            content: null,
            tool_calls: [{ id: 'c1', type: 'function', function: { name: 'weather', arguments: '{}' } }],
          },
          { role: 'tool', tool_call_id: 'c1', content: '{"celsius":21}' },
        ],
      };
      expect((await chat(writer(), KEYS.alice, withTool)).status).toBe(200);
      expect(embeddings.requests.length).toBe(embeds);
      const bad = await chat(writer(), KEYS.alice, ask('x'), { 'x-gw-cache-threshold': '2' });
      expect(bad.status).toBe(400);
      expect(bad.body.error).toMatchObject({ type: 'invalid_request', param: 'x-gw-cache-threshold' });
    });
  });
}
