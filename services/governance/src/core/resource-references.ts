import { GatewayError } from '@gw/shared';
import type { Collection, Stored } from './resources.ts';

/** The fields by which a resource names an owner, and the collection each names. */
export const REFERENCE_FIELDS = [
  ['team_id', 'teams'],
  ['customer_id', 'customers'],
  ['user_id', 'users'],
  ['business_unit_id', 'business-units'],
] as const satisfies ReadonlyArray<readonly [string, Collection]>;

export type ReferenceField = (typeof REFERENCE_FIELDS)[number][0];

/** The collections whose resources carry reference fields (keys: all four; teams and users: some). */
export const REFERRING_COLLECTIONS = ['virtual-keys', 'teams', 'users'] as const satisfies Collection[];

/** One resource that names another: detached by a cascading delete. */
export interface Referrer {
  collection: Collection;
  id: string;
  /** `scope_id`: a routing rule scoped to the resource (a cascade deletes the rule: it has no meaning left). */
  field: ReferenceField | 'scope_id';
}

/** The reference fields of a resource that name `collection`'s resource `id`. */
export function referrersAmong(
  candidates: ReadonlyArray<{ collection: Collection; resource: Stored }>,
  target: { collection: Collection; id: string },
): Referrer[] {
  const fields = REFERENCE_FIELDS.filter(([, collection]) => collection === target.collection);
  return candidates.flatMap(({ collection, resource }) =>
    fields
      .filter(([field]) => (resource as Partial<Record<ReferenceField, string>>)[field] === target.id)
      .map(([field]) => ({ collection, id: resource.id, field })),
  );
}

/** How many referrers a 409 names; the rest are counted (a team may have thousands of keys). */
const NAMED_REFERRERS = 20;

/** The 409 of a delete that would leave references to nothing, naming who still refers. */
export function stillReferenced(target: { collection: Collection; id: string }, referrers: Referrer[]) {
  const named = referrers
    .slice(0, NAMED_REFERRERS)
    .map(({ collection, id, field }) => `${collection} '${id}' (${field})`);
  const more = referrers.length - named.length;
  return new GatewayError({
    type: 'conflict',
    message:
      `${target.collection} '${target.id}' is still referenced by ${named.join(', ')}` +
      `${more > 0 ? ` and ${more} more` : ''}; change them first, or delete with ?cascade=true to detach ` +
      'them (their reference is removed; nothing else is deleted' +
      `${referrers.some(({ field }) => field === 'scope_id') ? ' but the routing rules scoped to it' : ''})`,
  });
}
