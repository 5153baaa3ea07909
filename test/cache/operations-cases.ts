// What operators see: budgets charged for the embedding and never for a cached answer, the admin endpoints
// that clear an entry, a cache key and a whole scope, and the cache's metrics.
import { pauseForNegativeCheck, waitFor } from '@gw/testkit';
import { describe, expect, it } from 'vitest';
import { call, get } from '../support/http.ts';
import { ADMIN, ask, type CacheContext, helpers, KEYS } from './context.ts';

export function operationsCases(context: CacheContext): void {
  const { chat, andStored, asHit } = helpers(context);

  describe('operations', () => {
    it('charges budgets for the embedding and nothing for the cached answer', async () => {
      const spent = async () =>
        (await get(`${context.gateway.adminUrl}/api/governance/virtual-keys/${KEYS.carol.id}/usage`, ADMIN))
          .body.usage[0].entries[0].used as number;
      const { embeddings } = context.fakes;
      embeddings.vectors.set('user: Name a primary colour', [0, 0, 1]);
      embeddings.vectors.set('user: Tell me one primary colour', [0, 0.1, 0.95]);
      // A miss: the answer ($0.018) and its embedding ($0.004).
      await andStored(() => chat(context.gateway.url, KEYS.carol, ask('Name a primary colour')));
      await waitFor(async () => (await spent()) >= 0.022, { what: 'the miss to be settled' });
      expect(await spent()).toBeCloseTo(0.022, 6);
      // An exact hit: nothing at all (no embedding either).
      const exact = await asHit(() => chat(context.reader, KEYS.carol, ask('Name a primary colour')));
      expect(exact.headers.get('x-gw-cache-hit-type')).toBe('exact');
      // A semantic hit: its embedding only.
      const near = await asHit(() => chat(context.reader, KEYS.carol, ask('Tell me one primary colour')));
      expect(near.headers.get('x-gw-cache-hit-type')).toBe('semantic');
      await waitFor(async () => (await spent()) >= 0.026, { what: 'the semantic hit to be settled' });
      // Negative check: settles are background work; a wrong charge of the cached answer has the time to land.
      await pauseForNegativeCheck(200);
      expect(await spent()).toBeCloseTo(0.026, 6);
    });

    it('clears an entry, a cache key and a scope through the admin API, on every replica', async () => {
      const { chat: upstream } = context.fakes;
      const admin = (path: string) =>
        call('DELETE', `${context.gateway.adminUrl}/api/cache${path}`, undefined, ADMIN);
      const scope = `vk:${KEYS.dave.id}`;
      await andStored(() => chat(context.gateway.url, KEYS.dave, ask('First to go')));
      const hit = await asHit(() => chat(context.reader, KEYS.dave, ask('First to go')));
      const id = hit.headers.get('x-gw-cache-entry-id')!;
      expect(await admin(`/scopes/${scope}/entries/${id}`)).toMatchObject({
        status: 200,
        body: { scope, id, removed: 1 },
      });
      let chats = upstream.requests.length;
      const gone = await chat(context.reader, KEYS.dave, ask('First to go'), {
        'x-gw-cache-no-store': 'true',
      });
      expect(gone.headers.get('x-gw-cache')).toBe('miss');
      expect(upstream.requests.length).toBe(chats + 1);
      expect((await admin(`/scopes/${scope}/entries/${id}`)).status).toBe(404);

      // A caller's own cache key.
      const keyed = { 'x-gw-cache-key': 'weekly-report' };
      await andStored(() => chat(context.gateway.url, KEYS.dave, ask('Write the weekly report'), keyed));
      await asHit(() => chat(context.reader, KEYS.dave, ask('Anything at all'), keyed));
      expect(await admin(`/scopes/${scope}/keys/weekly-report`)).toMatchObject({
        status: 200,
        body: { scope, key: 'weekly-report', removed: 1 },
      });
      chats = upstream.requests.length;
      await chat(context.reader, KEYS.dave, ask('Anything at all'), {
        ...keyed,
        'x-gw-cache-no-store': 'true',
      });
      expect(upstream.requests.length).toBe(chats + 1);

      // Everything of the scope: the two entries left.
      await andStored(() => chat(context.gateway.url, KEYS.dave, ask('Second to go')));
      await andStored(() => chat(context.gateway.url, KEYS.dave, ask('Third to go')));
      await asHit(() => chat(context.reader, KEYS.dave, ask('Third to go')));
      expect(await admin(`/scopes/${scope}`)).toMatchObject({ status: 200, body: { scope, removed: 2 } });
      for (const question of ['Second to go', 'Third to go']) {
        chats = upstream.requests.length;
        await chat(context.reader, KEYS.dave, ask(question), { 'x-gw-cache-no-store': 'true' });
        expect(upstream.requests.length).toBe(chats + 1);
      }
      // Removals need the admin credential.
      expect((await call('DELETE', `${context.gateway.adminUrl}/api/cache/scopes/${scope}`)).status).toBe(
        401,
      );
    });

    it('counts lookups, stores and lookup time in /metrics', async () => {
      // Every ingress's metrics: in a cluster, writes went to one replica and hits to the other.
      const pages = await Promise.all(context.gateway.urls.map((url) => get(`${url}/metrics`)));
      const text = pages.map((page) => String(page.body)).join('\n');
      // Label order is prom-client's: match the labels as a set.
      const counted = (name: string, labels: string[]) =>
        text
          .split('\n')
          .some(
            (line) =>
              line.startsWith(`${name}{`) &&
              labels.every((label) => line.includes(label)) &&
              Number(line.slice(line.lastIndexOf(' ') + 1)) > 0,
          );
      expect(counted('gw_cache_lookups_total', ['result="hit"', 'type="exact"'])).toBe(true);
      expect(counted('gw_cache_lookups_total', ['result="miss"', 'type="semantic"'])).toBe(true);
      expect(counted('gw_cache_stores_total', ['outcome="stored"'])).toBe(true);
      expect(counted('gw_cache_lookup_seconds_count', ['type="exact"'])).toBe(true);
      // Every embedding the cases asked for answered: no lookup of either replica counted an error.
      expect(counted('gw_cache_lookups_total', ['result="error"'])).toBe(false);
    });
  });
}
