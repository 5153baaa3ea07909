// `@gw/governance/pricing`: the price catalog on its own (the admin's `/api/pricing` reads the built-in prices
// and resolves names as admission does), without the governance core, its store and gRPC.
export {
  BUILT_IN_PRICES,
  type ModelPrice,
  PriceCatalog,
  type ServedModel,
} from './core/pricing.ts';
