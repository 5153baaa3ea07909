// `/api/pricing` over a memory store: what each route answers, that a write is stored and put in force in this
// process's live settings at once, and the 400s that name the field.
import { GatewayError, LiveSettings, parseGatewayConfig, readSystemSettings } from '@gw/shared';
import { MemoryStore } from '@gw/shared/store';
import { afterEach, describe, expect, it } from 'vitest';
import type { ModelPricing, PricingView, UnpricedPricing } from '../../api-types.ts';
import { routeCaller } from '../../testing/admin-harness.ts';
import { createPricingAdmin } from './pricing-admin.ts';

const stores: MemoryStore[] = [];
afterEach(async () => {
  for (const store of stores.splice(0)) await store.close();
});

async function setup(providerNames?: () => Promise<readonly string[]>) {
  const store = await MemoryStore.open();
  stores.push(store);
  const settings = LiveSettings.of(
    parseGatewayConfig({ governance: { pricing: { 'from-file': { input: 1, output: 2 } } } }),
  );
  return { store, settings, admin: routeCaller(createPricingAdmin({ store, settings, providerNames })) };
}

/** gpt-4o's built-in price, its batch prices (half) included. */
const GPT_4O = {
  input: 2.5,
  output: 10,
  cached_input: 1.25,
  batch: { input: 1.25, output: 5, cached_input: 0.625 },
};

const refusal = async (answer: Promise<unknown>) => {
  const error = await answer.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  if (!(error instanceof GatewayError)) throw new Error(`expected a GatewayError, got ${String(error)}`);
  return error;
};

describe('pricing admin', () => {
  it('lists built-in prices with source and date, the overrides, the unpriced default and what is charged', async () => {
    const { admin } = await setup();
    const { body } = (await admin('GET', '/api/pricing')) as { body: PricingView };
    expect(body.built_in).toContainEqual({
      model: 'gpt-4o',
      provider: 'openai',
      source: expect.stringContaining('openai.com'),
      as_of: '2026-11-23',
      price: GPT_4O,
    });
    expect(body.overrides).toEqual({ 'from-file': { input: 1, output: 2 } });
    expect(body.unpriced_model_price).toBeNull();
    expect(body.effective).toContainEqual({
      model: 'from-file',
      price: { input: 1, output: 2 },
      from: 'override',
    });
    expect(body.effective.find((entry) => entry.model === 'gpt-4o')?.from).toBe('built_in');
  });

  it('sets, changes and deletes an override; each is stored and in force in this process at once', async () => {
    const { admin, store, settings } = await setup();
    const put = (await admin('PUT', '/api/pricing/models/gpt-4o', {
      body: { input: 1, output: 4, context_window: 128_000 },
    })) as { body: ModelPricing };
    expect(put.body).toMatchObject({
      model: 'gpt-4o',
      override: { input: 1, output: 4, context_window: 128_000 },
      built_in: { model: 'gpt-4o', price: GPT_4O },
      effective: { price: { input: 1, output: 4 }, from: 'override', priced_as: 'gpt-4o' },
    });
    expect(settings.pricing.current()['gpt-4o']).toEqual({ input: 1, output: 4, context_window: 128_000 });
    const stored = await readSystemSettings(store, settings.current());
    expect(stored.governance.pricing['from-file']).toEqual({ input: 1, output: 2 });

    // A dated name is priced by its base model's override.
    const dated = (await admin('GET', '/api/pricing/models/gpt-4o-2024-08-06')) as { body: ModelPricing };
    expect(dated.body).toMatchObject({
      override: null,
      effective: { from: 'override', priced_as: 'gpt-4o' },
    });

    const patch = (await admin('PATCH', '/api/pricing/models/gpt-4o', {
      body: { output: 5, context_window: null },
    })) as { body: ModelPricing };
    expect(patch.body.override).toEqual({ input: 1, output: 5 });
    // A PATCH of a model without an override starts from its built-in price, its batch prices included.
    const fromBuiltIn = (await admin('PATCH', '/api/pricing/models/claude-3-5-haiku-20241022', {
      body: { output: 3 },
    })) as { body: ModelPricing };
    expect(fromBuiltIn.body.override).toEqual({
      input: 0.8,
      output: 3,
      cached_input: 0.08,
      cache_write_input: 1,
      cache_write_1h_input: 1.6,
      batch: { input: 0.4, output: 2, cached_input: 0.04, cache_write_input: 0.5, cache_write_1h_input: 0.8 },
    });

    const deleted = (await admin('DELETE', '/api/pricing/models/gpt-4o')) as { body: ModelPricing };
    expect(deleted.body).toMatchObject({
      override: null,
      effective: { from: 'built_in', priced_as: 'gpt-4o' },
    });
    expect(settings.pricing.current()['gpt-4o']).toBeUndefined();
    expect((await refusal(admin('DELETE', '/api/pricing/models/gpt-4o'))).status).toBe(404);
  });

  it('sets audio prices and a long-context tier, shows them and the built-in tiers, and drops a tier by PATCH', async () => {
    const { admin, settings } = await setup();
    const builtIn = (await admin('GET', '/api/pricing/models/gemini-2.5-pro-002')) as { body: ModelPricing };
    expect(builtIn.body.built_in?.price.above).toEqual({
      tokens: 200_000,
      input: 2.5,
      output: 15,
      cached_input: 0.625,
    });
    const price = {
      input: 2.5,
      output: 10,
      audio_input: 40,
      audio_output: 80,
      above: { tokens: 128_000, input: 5, output: 20, cached_input: 0.5 },
    };
    const put = (await admin('PUT', '/api/pricing/models/gpt-4o-audio-preview', { body: price })) as {
      body: ModelPricing;
    };
    expect(put.body).toMatchObject({ override: price, effective: { price, from: 'override' } });
    expect(settings.pricing.current()['gpt-4o-audio-preview']).toEqual(price);
    const { body } = (await admin('GET', '/api/pricing')) as { body: PricingView };
    expect(body.overrides['gpt-4o-audio-preview']).toEqual(price);

    const patch = (await admin('PATCH', '/api/pricing/models/gpt-4o-audio-preview', {
      body: { above: null, audio_output: 70 },
    })) as { body: ModelPricing };
    expect(patch.body.override).toEqual({ input: 2.5, output: 10, audio_input: 40, audio_output: 70 });
  });

  it('keeps a name with a slash or one like a property of every object as a model of its own', async () => {
    const { admin } = await setup();
    const slashed = (await admin('PUT', `/api/pricing/models/${encodeURIComponent('acme/llama-3-8b')}`, {
      body: { input: 0.1, output: 0.2 },
    })) as { body: ModelPricing };
    expect(slashed.body.override).toEqual({ input: 0.1, output: 0.2 });
    const odd = (await admin('GET', '/api/pricing/models/constructor')) as { body: ModelPricing };
    expect(odd.body).toEqual({ model: 'constructor', override: null, built_in: null, effective: null });
    expect((await refusal(admin('DELETE', '/api/pricing/models/constructor'))).status).toBe(404);
  });

  it("sets, shows, patches and deletes a provider's own price of a model, the path's name encoded", async () => {
    const { admin, settings } = await setup(async () => ['together']);
    const path = (name: string) => `/api/pricing/models/${encodeURIComponent(name)}`;
    // A PATCH without an override starts from the built-in price of the model the provider serves.
    const patched = (await admin('PATCH', path('azure/gpt-4o'), { body: { output: 12 } })) as {
      body: ModelPricing;
    };
    expect(patched.body).toMatchObject({
      model: 'azure/gpt-4o',
      provider: 'azure',
      override: { ...GPT_4O, output: 12 },
      built_in: { model: 'gpt-4o' },
      effective: { from: 'override', priced_as: 'azure/gpt-4o' },
    });
    expect(settings.pricing.current()['azure/gpt-4o']).toEqual({ ...GPT_4O, output: 12 });
    await admin('PUT', path('together/llama-3.1-8b'), { body: { input: 0.18, output: 0.18 } });
    await admin('PUT', path('meta-llama/llama-3.1-8b'), { body: { input: 0.2, output: 0.2 } });

    const { body } = (await admin('GET', '/api/pricing')) as { body: PricingView };
    expect(body.overrides['azure/gpt-4o']).toEqual({ ...GPT_4O, output: 12 });
    expect(body.effective).toContainEqual({
      model: 'azure/gpt-4o',
      provider: 'azure',
      price: { ...GPT_4O, output: 12 },
      from: 'override',
    });
    expect(body.effective).toContainEqual({
      model: 'gpt-4o',
      price: GPT_4O,
      from: 'built_in',
    });
    // A configured provider's name is one too; a name no provider has is a model's own.
    expect(body.effective).toContainEqual({
      model: 'together/llama-3.1-8b',
      provider: 'together',
      price: { input: 0.18, output: 0.18 },
      from: 'override',
    });
    expect(body.effective).toContainEqual({
      model: 'meta-llama/llama-3.1-8b',
      price: { input: 0.2, output: 0.2 },
      from: 'override',
    });

    // A dated name of the provider's model is priced by its override, as admission prices it.
    const dated = (await admin('GET', path('azure/gpt-4o-2024-08-06'))) as { body: ModelPricing };
    expect(dated.body).toMatchObject({
      provider: 'azure',
      override: null,
      effective: { from: 'override', priced_as: 'azure/gpt-4o' },
    });
    const plain = (await admin('GET', path('gpt-4o-2024-08-06'))) as { body: ModelPricing };
    expect(plain.body.effective).toMatchObject({ from: 'built_in', priced_as: 'gpt-4o' });

    const deleted = (await admin('DELETE', path('azure/gpt-4o'))) as { body: ModelPricing };
    expect(deleted.body).toMatchObject({
      override: null,
      effective: { from: 'built_in', priced_as: 'gpt-4o' },
    });
    expect(settings.pricing.current()['azure/gpt-4o']).toBeUndefined();
  });

  it('names the built-in providers alone when the configured ones cannot be read', async () => {
    const { admin } = await setup(() => Promise.reject(new Error('the router does not answer')));
    await admin('PUT', `/api/pricing/models/${encodeURIComponent('vertex/gemini-2.5-pro')}`, {
      body: { input: 1.5, output: 12 },
    });
    const { body } = (await admin('GET', '/api/pricing')) as { body: PricingView };
    expect(body.effective).toContainEqual({
      model: 'vertex/gemini-2.5-pro',
      provider: 'vertex',
      price: { input: 1.5, output: 12 },
      from: 'override',
    });
  });

  it('sets and clears the unpriced default, which then prices every unknown model', async () => {
    const { admin, settings } = await setup();
    const set = (await admin('PUT', '/api/pricing/unpriced', { body: { input: 2, output: 3 } })) as {
      body: UnpricedPricing;
    };
    expect(set.body).toEqual({ unpriced_model_price: { input: 2, output: 3 } });
    expect(settings.governance.current().unpriced_model_price).toEqual({ input: 2, output: 3 });
    const unknown = (await admin('GET', '/api/pricing/models/llama3.2:3b')) as { body: ModelPricing };
    expect(unknown.body.effective).toEqual({
      price: { input: 2, output: 3 },
      from: 'unpriced',
      priced_as: null,
    });
    const cleared = (await admin('DELETE', '/api/pricing/unpriced')) as { body: UnpricedPricing };
    expect(cleared.body).toEqual({ unpriced_model_price: null });
    expect(settings.governance.current().unpriced_model_price).toBeUndefined();
    // The other governance settings are untouched.
    expect(settings.governance.current().expected_completion_tokens).toBe(256);
  });

  it.each([
    ['PUT', '/api/pricing/models/m', { input: -1, output: 1 }, 'input'],
    ['PUT', '/api/pricing/models/m', { input: 1 }, 'output'],
    ['PUT', '/api/pricing/models/m', { input: 1, output: 1, cached_input: 'cheap' }, 'cached_input'],
    ['PUT', '/api/pricing/models/m', { input: 1, output: 1, context_window: 1.5 }, 'context_window'],
    ['PUT', '/api/pricing/models/m', { input: 1, output: 1, per_image: 1_001 }, 'per_image'],
    ['PUT', '/api/pricing/models/m', { input: 1, output: 1, audio_input: -1 }, 'audio_input'],
    [
      'PUT',
      '/api/pricing/models/m',
      { input: 1, output: 1, above: { tokens: 1.5, input: 2, output: 2 } },
      'above',
    ],
    ['PUT', '/api/pricing/models/m', { input: 1, output: 1, above: { input: 2, output: 2 } }, 'above'],
    ['PUT', '/api/pricing/models/m', { input: 1, output: 1, above: { tokens: 10, input: 2 } }, 'above'],
    ['PATCH', '/api/pricing/models/unknown-model', { output: 1 }, 'input'],
    ['PUT', `/api/pricing/models/${encodeURIComponent('bad\u0007name')}`, { input: 1, output: 1 }, 'model'],
    ['PUT', `/api/pricing/models/${'m'.repeat(300)}`, { input: 1, output: 1 }, 'model'],
    ['PUT', '/api/pricing/unpriced', { input: 1, output: null }, 'output'],
  ])('refuses %s %s %j naming %s, and changes nothing', async (method, path, body, field) => {
    const { admin, settings } = await setup();
    const before = settings.current();
    const error = await refusal(admin(method, path, { body }));
    expect(error.status).toBe(400);
    expect(error.message).toContain(field);
    expect(settings.current()).toBe(before);
  });
});
