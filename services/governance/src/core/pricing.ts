import { fixed, type Live, type ModelPrice, type Usage } from '@gw/shared';
import { PRICE_LISTS } from './built-in-prices.ts';
import { type CostMicros, dearestTokenPrices, NO_COST, pricesFor, priceUsage } from './cost-parts.ts';

export type { ModelPrice } from '@gw/shared';

/** Suffixes and prefixes a provider adds to a base model name: dates, versions, regions, vendors. */
const NAME_VARIANTS: RegExp[] = [
  /^(?:us|eu|apac|ap|global|us-gov)\./, // Bedrock cross-region inference profiles
  /^(?:anthropic|meta|mistral|cohere|amazon|ai21|deepseek)\./, // Bedrock vendor prefixes
  /-v\d+(?::\d+)?$/, // Bedrock versions (-v1:0, -v2)
  /@\d{8}$/, // Vertex dates (@20241022)
  /-\d{4}-\d{2}-\d{2}$/, // OpenAI dates (-2024-08-06)
  /-\d{8}$/, // Anthropic dates (-20241022)
  /-\d{4}$/, // Mistral dates (-2411), OpenAI (-0125)
  /-\d{3}$/, // Gemini versions (-002)
  /-(?:latest|preview(?:-[\w-]+)?|exp(?:-[\w-]+)?)$/,
];

/**
 * The names a model may be priced under, most specific first: as given, without the `provider/` prefix, then
 * with each variant part taken off in turn (`us.anthropic.claude-3-5-sonnet-20241022-v2:0` → … →
 * `claude-3-5-sonnet`, `gpt-4o-2024-08-06` → `gpt-4o`).
 */
export function modelNameCandidates(model: string): string[] {
  const candidates = [model];
  let name = model.slice(model.lastIndexOf('/') + 1);
  if (name !== model) candidates.push(name);
  for (const variant of NAME_VARIANTS) {
    const shorter = name.replace(variant, '');
    if (shorter !== name && shorter.length > 0) {
      name = shorter;
      candidates.push(name);
    }
  }
  return candidates;
}

/** Most resolved names kept per table (models and providers come from requests: bounded). */
const RESOLVED_LIMIT = 10_000;

/**
 * A model as a call is served: the provider that serves it (the target's provider name: `azure`, `openai`, a
 * custom provider's own) and the model's name. Empty when no provider is known (a bare name asked of the admin
 * API, a request that reached none): only the plain names apply then.
 */
export interface ServedModel {
  provider: string;
  model: string;
}

/** A built-in price with the list it comes from (`GET /api/pricing`). */
export interface BuiltInPrice {
  model: string;
  provider: string;
  source: string;
  as_of: string;
  price: ModelPrice;
}

/** Every built-in price, in the order of the lists. */
export const BUILT_IN_PRICES: readonly BuiltInPrice[] = PRICE_LISTS.flatMap(({ prices, ...list }) =>
  Object.entries(prices).map(([model, price]) => ({ model, ...list, price })),
);

/** How a model's price was found: the name it is priced under, and whether an override or the catalog said. */
export interface PriceResolution {
  /** The name the price is kept under (`gpt-4o` for `gpt-4o-2024-08-06`, `azure/gpt-4o` for Azure's). */
  name: string;
  price: ModelPrice;
  from: 'override' | 'built_in';
  /** The provider an override named `provider/model` prices the model for, when that one was found. */
  provider?: string;
}

const BUILT_IN_TABLE: ReadonlyMap<string, PriceResolution> = new Map(
  BUILT_IN_PRICES.map(({ model, price }) => [model, { name: model, price, from: 'built_in' as const }]),
);

/**
 * The prices of one snapshot of the overrides, built-in ones beneath them, and the names it has resolved: made
 * once per snapshot, so a request pays a map lookup, and a change of the overrides starts a new one.
 */
class PriceTable {
  private readonly entries: Map<string, PriceResolution>;
  private readonly resolved = new Map<string, PriceResolution | null>();

  constructor(overrides: Readonly<Record<string, ModelPrice>>) {
    this.entries = new Map(BUILT_IN_TABLE);
    for (const [name, price] of Object.entries(overrides)) {
      this.entries.set(name, { name, price, from: 'override' });
    }
  }

  resolve(served: ServedModel): PriceResolution | undefined {
    // The provider's length first: no provider and model can spell another pair's key.
    const key = `${served.provider.length}:${served.provider}/${served.model}`;
    let found = this.resolved.get(key);
    if (found === undefined) {
      found = this.lookUp(served) ?? null;
      if (this.resolved.size >= RESOLVED_LIMIT) this.resolved.clear();
      this.resolved.set(key, found);
    }
    return found ?? undefined;
  }

  /**
   * The provider's own override under any of the model's names (`azure/gpt-4o` for Azure's
   * `gpt-4o-2024-08-06`), then the plain names, overrides and built-in prices alike. Built-in names hold no
   * `/`, so a provider's name finds overrides only; a plain name with a `/` (`meta-llama/llama-3.1-8b`) is
   * found as the model's own name, whoever serves it.
   */
  private lookUp({ provider, model }: ServedModel): PriceResolution | undefined {
    const names = modelNameCandidates(model);
    if (provider !== '') {
      for (const name of names) {
        const entry = this.entries.get(`${provider}/${name}`);
        if (entry) return { ...entry, provider };
      }
    }
    for (const name of names) {
      const entry = this.entries.get(name);
      if (entry) return entry;
    }
    return undefined;
  }
}

/** Where a catalog reads the operator's prices: live settings in a gateway, fixed values in tests and tools. */
export interface PriceSources {
  /** Price overrides per model (`governance.pricing`, `/api/pricing/models/{model}`). */
  overrides?: Live<Readonly<Record<string, ModelPrice>>> | undefined;
  /** The governance settings: `unpriced_model_price` is what a model without a price costs, when set. */
  settings?: Live<{ unpriced_model_price?: ModelPrice | undefined }> | undefined;
  /** Draws the rounding of sub-micro-dollar remainders (tests fix it). */
  random?: (() => number) | undefined;
}

/**
 * What models cost: the built-in list prices under the operator's overrides, and the unpriced default. Both
 * are read at each use from the live settings, so a price changed through the API applies to the next request;
 * routing (`lowest_cost`, context windows), admission and settlement all read one catalog. A model is priced as
 * the provider that serves it is charged for it: an override `provider/model` comes before the model's own.
 */
export class PriceCatalog {
  private readonly overrides: Live<Readonly<Record<string, ModelPrice>>>;
  private readonly settings: Live<{ unpriced_model_price?: ModelPrice | undefined }>;
  private readonly random: () => number;
  /** The table of the overrides snapshot it was made from (snapshots keep their identity while unchanged). */
  private table: { of: Readonly<Record<string, ModelPrice>>; prices: PriceTable } | undefined;

  constructor(sources: PriceSources = {}) {
    this.overrides = sources.overrides ?? fixed({});
    this.settings = sources.settings ?? fixed({});
    this.random = sources.random ?? Math.random;
  }

  private prices(): PriceTable {
    const overrides = this.overrides.current();
    if (this.table?.of !== overrides) this.table = { of: overrides, prices: new PriceTable(overrides) };
    return this.table.prices;
  }

  /** How a served model is priced under any of its names, override or built-in; undefined when neither knows it. */
  resolve(served: ServedModel): PriceResolution | undefined {
    return this.prices().resolve(served);
  }

  /** The list price of a served model under any of its names (an override or built in); undefined without one. */
  listPrice(served: ServedModel): ModelPrice | undefined {
    return this.resolve(served)?.price;
  }

  /** What a model without a price costs, when the operator said. */
  unpriced(): ModelPrice | undefined {
    return this.settings.current().unpriced_model_price;
  }

  /** The price charged for a served model: its list price, else the configured price of unpriced models. */
  price(served: ServedModel): ModelPrice | undefined {
    return this.listPrice(served) ?? this.unpriced();
  }

  /**
   * What a call cost in micro-USD (integers: budgets are INCRBY counters), by what it was billed for
   * (`priceUsage`: the parts sum to the total); nothing for a model without a price. A batch's usage is priced
   * by the model it names (`usage.batch.model`: the call that read it names none), as its provider serves it.
   */
  cost(served: ServedModel, usage: Usage): CostMicros {
    const model = usage.batch?.model ?? served.model;
    const price = this.price({ provider: served.provider, model });
    return price ? priceUsage(price, usage, this.random) : NO_COST;
  }

  /** The total of `cost`, in micro-USD. */
  costMicros(served: ServedModel, usage: Usage): number {
    return this.cost(served, usage).total;
  }

  /**
   * What admission reserves of a request, in micro-USD: `fixed` for its prompt and its call, and
   * `perCompletionToken` for each completion token it may use. Every token at the dearest price it can be billed
   * at (`dearestTokenPrices`: an audio answer is billed above text), at the long-context tier's prices when the
   * prompt is longer than the tier's threshold (as `cost` will price it), and the price per call; what is priced
   * per image, second or character is not known before the answer. Undefined for a model without a price.
   */
  reserveRates(
    served: ServedModel,
    promptTokens: number,
  ): { fixed: number; perCompletionToken: number } | undefined {
    const price = this.price(served);
    if (!price) return undefined;
    const dearest = dearestTokenPrices(pricesFor(price, promptTokens));
    return {
      fixed: promptTokens * dearest.prompt + (price.per_request ?? 0) * 1_000_000,
      perCompletionToken: dearest.completion,
    };
  }

  /** The most a request can cost (`reserveRates`): its prompt and every allowed completion token used. */
  worstCaseMicros(served: ServedModel, promptTokens: number, maxCompletionTokens: number): number {
    const rates = this.reserveRates(served, promptTokens);
    return rates ? Math.ceil(rates.fixed + maxCompletionTokens * rates.perCompletionToken) : 0;
  }
}

export const MICROS_PER_USD = 1_000_000;
