import { BUILT_IN_PRICES, type ModelPrice, PriceCatalog } from '@gw/governance/pricing';
import {
  fixed,
  type LiveSettings,
  modelPriceSchema,
  notFound,
  pricedModelNameSchema,
  priceOverridesSchema,
  readSystemSettings,
  type SystemSettings,
  unpricedModelPriceSchema,
  validate,
  writeSystemSettings,
} from '@gw/shared';
import type { Store } from '@gw/shared/store';
import type { ModelPricing, PricingView, UnpricedPricing } from '../../api-types.ts';
import { type AdminRequest, type AdminResult, type AdminRoute, route } from '../http/admin-route.ts';
import { requireStore } from './require-store.ts';

export interface PricingAdminOptions {
  /** Where the settings live (every process follows them); absent in a cluster admin without REDIS_URL. */
  store: Store | undefined;
  /** This process's live settings (the config file's, kept on the stored ones). */
  settings: LiveSettings;
}

/** The built-in prices alone: what a model costs once its override is deleted. */
const BUILT_IN = new PriceCatalog();
const BUILT_IN_BY_NAME = new Map(BUILT_IN_PRICES.map((entry) => [entry.model, entry]));

/** The catalog an admission makes of these settings: the same resolution of names, the same precedence. */
const catalogOf = (settings: SystemSettings) =>
  new PriceCatalog({
    overrides: fixed(settings.governance.pricing),
    settings: fixed(settings.governance.settings),
  });

function pricingView(settings: SystemSettings): PricingView {
  const catalog = catalogOf(settings);
  const names = [...new Set([...BUILT_IN_BY_NAME.keys(), ...Object.keys(settings.governance.pricing)])];
  return {
    built_in: [...BUILT_IN_PRICES],
    overrides: settings.governance.pricing,
    unpriced_model_price: settings.governance.settings.unpriced_model_price ?? null,
    effective: names.sort().flatMap((model) => {
      const resolved = catalog.resolve(model);
      return resolved ? [{ model, price: resolved.price, from: resolved.from }] : [];
    }),
  };
}

/** A model's own override (a name like `constructor` is a model here, never a property of every object). */
const overrideOf = (settings: SystemSettings, model: string): ModelPrice | undefined =>
  Object.hasOwn(settings.governance.pricing, model) ? settings.governance.pricing[model] : undefined;

/** One model as admission prices it: its own override, the built-in price its name resolves to, and the price charged. */
function modelView(settings: SystemSettings, model: string): ModelPricing {
  const catalog = catalogOf(settings);
  const builtIn = BUILT_IN.resolve(model);
  const resolved = catalog.resolve(model);
  const unpriced = catalog.unpriced();
  return {
    model,
    override: overrideOf(settings, model) ?? null,
    built_in: (builtIn && BUILT_IN_BY_NAME.get(builtIn.name)) ?? null,
    effective: resolved
      ? { price: resolved.price, from: resolved.from, priced_as: resolved.name }
      : unpriced
        ? { price: unpriced, from: 'unpriced', priced_as: null }
        : null,
  };
}

/** The `{model}` of a path, refused (400) when it is no name a price can be kept under. */
const modelOf = (request: AdminRequest<{ model: string }>) =>
  validate(pricedModelNameSchema, request.params.model, 'model');

/** A PATCH's fields over a price: `null` takes an optional field away. */
function patched(base: ModelPrice | undefined, changes: Record<string, unknown>): Record<string, unknown> {
  const merged: Record<string, unknown> = { ...base, ...changes };
  for (const [field, value] of Object.entries(changes)) if (value === null) delete merged[field];
  return merged;
}

/**
 * `/api/pricing` (docs/pricing.md): the built-in prices with their source and date, the operator's overrides
 * per model, the unpriced default and the price in force for every known model; overrides are set (PUT, whole),
 * changed (PATCH) and deleted (back to the built-in price) per model. Prices are system settings: stored, and
 * applied by every process to its next request.
 */
export function createPricingAdmin(options: PricingAdminOptions): AdminRoute[] {
  const storeOf = () => requireStore(options.store, 'prices');
  const current = () => readSystemSettings(storeOf(), options.settings.current());

  /** Stores settings changed by `change` and puts them in force here at once (elsewhere at the change notice). */
  async function write(change: (settings: SystemSettings) => SystemSettings): Promise<SystemSettings> {
    const store = storeOf();
    const next = change(await readSystemSettings(store, options.settings.current()));
    validate(priceOverridesSchema, next.governance.pricing, 'governance.pricing');
    await writeSystemSettings(store, next);
    options.settings.replace(next);
    return next;
  }

  const withOverrides = (settings: SystemSettings, pricing: SystemSettings['governance']['pricing']) => ({
    ...settings,
    governance: { ...settings.governance, pricing },
  });
  const withUnpriced = (settings: SystemSettings, price: ModelPrice | undefined) => {
    const { unpriced_model_price: _previous, ...rest } = settings.governance.settings;
    return {
      ...settings,
      governance: {
        ...settings.governance,
        settings: price ? { ...rest, unpriced_model_price: price } : rest,
      },
    };
  };
  const setOverride = async (model: string, price: ModelPrice): Promise<AdminResult> => {
    const settings = await write((now) => withOverrides(now, { ...now.governance.pricing, [model]: price }));
    return { status: 200, body: modelView(settings, model) };
  };
  const unpricedView = (settings: SystemSettings): UnpricedPricing => ({
    unpriced_model_price: settings.governance.settings.unpriced_model_price ?? null,
  });

  return [
    route({
      method: 'GET',
      path: '/pricing',
      permission: 'pricing:read',
      handle: async () => ({ status: 200, body: pricingView(await current()) }),
    }),
    route({
      method: 'GET',
      path: '/pricing/models/:model',
      permission: 'pricing:read',
      handle: async (request) => ({ status: 200, body: modelView(await current(), modelOf(request)) }),
    }),
    route({
      method: 'PUT',
      path: '/pricing/models/:model',
      permission: 'pricing:write',
      handle: async (request) =>
        setOverride(modelOf(request), validate(modelPriceSchema, await request.body())),
    }),
    route({
      method: 'PATCH',
      path: '/pricing/models/:model',
      permission: 'pricing:write',
      handle: async (request) => {
        const model = modelOf(request);
        const settings = await current();
        // A model without an override starts from the built-in price its name resolves to.
        const base = overrideOf(settings, model) ?? BUILT_IN.listPrice(model);
        return setOverride(model, validate(modelPriceSchema, patched(base, await request.body())));
      },
    }),
    route({
      method: 'DELETE',
      path: '/pricing/models/:model',
      permission: 'pricing:write',
      handle: async (request) => {
        const model = modelOf(request);
        const settings = await write((now) => {
          if (!overrideOf(now, model)) throw notFound(`a price override of model '${model}'`);
          const { [model]: _deleted, ...rest } = now.governance.pricing;
          return withOverrides(now, rest);
        });
        return { status: 200, body: modelView(settings, model) };
      },
    }),
    route({
      method: 'GET',
      path: '/pricing/unpriced',
      permission: 'pricing:read',
      handle: async () => ({ status: 200, body: unpricedView(await current()) }),
    }),
    route({
      method: 'PUT',
      path: '/pricing/unpriced',
      permission: 'pricing:write',
      handle: async (request) => {
        const price = validate(unpricedModelPriceSchema, await request.body());
        return { status: 200, body: unpricedView(await write((now) => withUnpriced(now, price))) };
      },
    }),
    route({
      method: 'DELETE',
      path: '/pricing/unpriced',
      permission: 'pricing:write',
      handle: async () => ({
        status: 200,
        body: unpricedView(await write((now) => withUnpriced(now, undefined))),
      }),
    }),
  ];
}
