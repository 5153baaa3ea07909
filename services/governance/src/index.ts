export * from './compose.ts';
export * from './core/anonymous.ts';
export * from './core/governance-core.ts';
/** Each management action's answer, for the admin API's types (@gw/admin/api-types). */
export type { ManageResults } from './core/governance-messages.ts';
export * from './core/governance-service.ts';
/** Each collection's stored resources, which the admin API shows (@gw/admin/api-types). */
export type { Collection, StoredOf } from './core/resources.ts';
