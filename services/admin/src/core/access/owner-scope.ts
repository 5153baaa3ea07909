import type { GovernanceService } from '@gw/governance';
import { GatewayError } from '@gw/shared';
import type { Principal } from './admin-principal.ts';

/** The owner ids each governance collection carries, and the collection each names. */
const OWNER_FIELDS: Record<
  string,
  ReadonlyArray<'team_id' | 'customer_id' | 'business_unit_id' | 'user_id'>
> = {
  'virtual-keys': ['team_id', 'customer_id', 'business_unit_id', 'user_id'],
  teams: ['customer_id', 'business_unit_id'],
  users: ['team_id', 'customer_id'],
};

type Resource = Record<string, unknown>;

/** What a team-scoped principal reaches: its teams, and the customers and business units that own them. */
interface Scope {
  teams: ReadonlySet<string>;
  customers: ReadonlySet<string>;
  units: ReadonlySet<string>;
}

async function read(governance: GovernanceService, collection: string, id: string) {
  try {
    return (await governance.manage({ action: 'get', collection, id })) as Resource;
  } catch (error) {
    if (error instanceof GatewayError && error.type === 'not_found') return undefined;
    throw error;
  }
}

async function scopeOf(principal: Principal, governance: GovernanceService): Promise<Scope> {
  const teams = await Promise.all(principal.teamIds.map((id) => read(governance, 'teams', id)));
  const ids = (field: string) =>
    new Set(teams.flatMap((team) => (typeof team?.[field] === 'string' ? [team[field] as string] : [])));
  return { teams: new Set(principal.teamIds), customers: ids('customer_id'), units: ids('business_unit_id') };
}

function outside(principal: Principal, field: string, message: string): GatewayError {
  const teams = principal.teamIds.length > 0 ? principal.teamIds.join(', ') : 'none';
  return new GatewayError({
    type: 'forbidden',
    code: 'team_scope',
    param: field,
    message: `${field}: ${message}; role ${principal.roleId} acts within its teams only (yours: ${teams})`,
  });
}

/** Whether an owner id is within the scope; a user is when it belongs to one of the teams. */
async function within(
  options: { scope: Scope; governance: GovernanceService },
  field: string,
  id: string,
): Promise<string | undefined> {
  const { scope } = options;
  switch (field) {
    case 'team_id':
      return scope.teams.has(id) ? undefined : `'${id}' is not one of your teams`;
    case 'customer_id':
      return scope.customers.has(id) ? undefined : `'${id}' is not the customer of one of your teams`;
    case 'business_unit_id':
      return scope.units.has(id) ? undefined : `'${id}' is not the business unit of one of your teams`;
    default: {
      const user = await read(options.governance, 'users', id);
      const team = user?.['team_id'];
      return typeof team === 'string' && scope.teams.has(team)
        ? undefined
        : `'${id}' is not a user of one of your teams`;
    }
  }
}

/**
 * Owner checks of a team-scoped role's governance write (issue 25 defect 6): every owner id the body sets
 * (`customer_id`, `business_unit_id`, `user_id`, `team_id`) must be one its teams reach, unless it is the value
 * the resource already has; and a team, customer, business unit or user it changes or deletes must be its
 * own. Otherwise a Developer could charge its keys to any customer. Throws 403 (`team_scope`) naming the field.
 */
export async function checkOwners(options: {
  principal: Principal;
  governance: GovernanceService;
  collection: string;
  method: string;
  /** The resource's id for a change of one; undefined for a create. */
  id?: string | undefined;
  body?: Resource | undefined;
}): Promise<void> {
  const { principal, governance, collection, id } = options;
  const fields = OWNER_FIELDS[collection];
  const owned = ['teams', 'customers', 'business-units', 'users'].includes(collection);
  if (!fields && !owned) return;
  const scope = await scopeOf(principal, governance);
  const stored = id === undefined ? undefined : await read(governance, collection, id);
  if (id !== undefined && stored && owned) {
    const own =
      collection === 'teams'
        ? scope.teams.has(id)
        : collection === 'customers'
          ? scope.customers.has(id)
          : collection === 'business-units'
            ? scope.units.has(id)
            : typeof stored['team_id'] === 'string' && scope.teams.has(stored['team_id']);
    if (!own) throw outside(principal, 'id', `${collection} '${id}' is not within your teams`);
  }
  if (!options.body || options.method === 'DELETE') return;
  for (const field of fields ?? []) {
    const value = options.body[field];
    if (typeof value !== 'string' || value === stored?.[field]) continue;
    const refusal = await within({ scope, governance }, field, value);
    if (refusal) throw outside(principal, field, refusal);
  }
}
