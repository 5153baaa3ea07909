import { BUILT_IN_PRICES, type ModelPrice, PriceCatalog, type ServedModel } from '@gw/governance/pricing';
import {
  fixed,
  type LiveSettings,
  modelPriceSchema,
  notFound,
  PROVIDER_NAMES,
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
  /**
   * The names of the providers configured now (the router's): an override named `<provider>/<model>` of one is
   * shown as that provider's price of the model. The built-in providers' names count without it.
   */
  providerNames?: (() => Promise<readonly string[]>) | undefined;
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

/**
 * How a name of the API is priced: `<provider>/<model>` as that provider's model when the part before the `/` is
 * a provider gw knows (`azure/gpt-4o`), any other name as a model's own, whoever serves it
 * (`meta-llama/llama-3.1-8b`).
 */
function servedAs(name: string, providers: ReadonlySet<string>): ServedModel {
  const slash = name.indexOf('/');
  return slash > 0 && providers.has(name.slice(0, slash))
    ? { provider: name.slice(0, slash), model: name.slice(slash + 1) }
    : { provider: '', model: name };
}

function pricingView(settings: SystemSettings, providers: ReadonlySet<string>): PricingView {
  const catalog = catalogOf(settings);
  const names = [...new Set([...BUILT_IN_BY_NAME.keys(), ...Object.keys(settings.governance.pricing)])];
  return {
    built_in: [...BUILT_IN_PRICES],
    overrides: settings.governance.pricing,
    unpriced_model_price: settings.governance.settings.unpriced_model_price ?? null,
    effective: names.sort().flatMap((name) => {
      const served = servedAs(name, providers);
      const resolved = catalog.resolve(served);
      if (!resolved) return [];
      // A provider's override keeps its name (the path that changes it) and says whose price it is.
      const provider = resolved.provider === undefined ? {} : { provider: resolved.provider };
      return [{ model: name, ...provider, price: resolved.price, from: resolved.from }];
    }),
  };
}

/** A model's own override (a name like `constructor` is a model here, never a property of every object). */
const overrideOf = (settings: SystemSettings, model: string): ModelPrice | undefined =>
  Object.hasOwn(settings.governance.pricing, model) ? settings.governance.pricing[model] : undefined;

/**
 * One model as admission prices it: its own override, the built-in price its name resolves to, and the price
 * charged; a name `<provider>/<model>` of a known provider as that provider serves the model.
 */
function modelView(settings: SystemSettings, name: string, providers: ReadonlySet<string>): ModelPricing {
  const catalog = catalogOf(settings);
  const served = servedAs(name, providers);
  const builtIn = BUILT_IN.resolve(served);
  const resolved = catalog.resolve(served);
  const unpriced = catalog.unpriced();
  return {
    model: name,
    ...(served.provider !== '' && { provider: served.provider }),
    override: overrideOf(settings, name) ?? null,
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
 * changed (PATCH) and deleted (back to the built-in price) per model, or per provider and model
 * (`azure%2Fgpt-4o`). Prices are system settings: stored, and applied by every process to its next request.
 */
export function createPricingAdmin(options: PricingAdminOptions): AdminRoute[] {
  const storeOf = () => requireStore(options.store, 'prices');
  const current = () => readSystemSettings(storeOf(), options.settings.current());
  /** The built-in providers and those configured now; the built-in ones alone when the router does not answer. */
  const providers = async (): Promise<ReadonlySet<string>> => {
    const configured = await Promise.resolve(options.providerNames?.()).catch(() => undefined);
    return new Set<string>([...PROVIDER_NAMES, ...(configured ?? [])]);
  };

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
    return { status: 200, body: modelView(settings, model, await providers()) };
  };
  const unpricedView = (settings: SystemSettings): UnpricedPricing => ({
    unpriced_model_price: settings.governance.settings.unpriced_model_price ?? null,
  });

  return [
    route({
      method: 'GET',
      path: '/pricing',
      permission: 'pricing:read',
      handle: async () => ({ status: 200, body: pricingView(await current(), await providers()) }),
    }),
    route({
      method: 'GET',
      path: '/pricing/models/:model',
      permission: 'pricing:read',
      handle: async (request) => ({
        status: 200,
        body: modelView(await current(), modelOf(request), await providers()),
      }),
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
        const base = overrideOf(settings, model) ?? BUILT_IN.listPrice(servedAs(model, await providers()));
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
        return { status: 200, body: modelView(settings, model, await providers()) };
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
