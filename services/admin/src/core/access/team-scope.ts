import type { GovernanceService } from '@gw/governance';
import { GatewayError } from '@gw/shared';
import type { Principal } from './admin-principal.ts';
import { checkOwners } from './owner-scope.ts';

/**
 * Team scoping of a route for a team-scoped role (Developer), checked before the handler runs: virtual-key
 * routes act on keys of the caller's teams only; `owner`: a write of another governance owner (team, customer,
 * business unit, user), kept within its teams (owner-scope.ts).
 */
export type TeamScope = 'virtual-key-list' | 'virtual-key-create' | 'virtual-key' | 'owner';

interface ScopedRequest {
  method: string;
  segments: string[];
  body: () => Promise<Record<string, unknown>>;
}

const teamOf = (value: unknown) =>
  typeof value === 'object' && value !== null ? (value as Record<string, unknown>)['team_id'] : undefined;

function outsideTeams(principal: Principal, what: string): GatewayError {
  const teams = principal.teamIds.length > 0 ? principal.teamIds.join(', ') : 'none';
  return new GatewayError({
    type: 'forbidden',
    code: 'team_scope',
    param: 'team_id',
    message: `${what}; role ${principal.roleId} acts on virtual keys of its teams only (yours: ${teams})`,
  });
}

/**
 * Team scoping of virtual keys for a team-scoped role (Developer): a key is created, read, changed, rotated
 * and deleted only within the caller's teams. Throws 403 naming the team; answers a filter for list answers.
 * Other roles pass unchanged.
 */
export async function checkTeamScope(options: {
  scope: TeamScope | undefined;
  principal: Principal;
  request: ScopedRequest;
  governance: GovernanceService;
}): Promise<((body: unknown) => unknown) | undefined> {
  const { principal, request, scope } = options;
  if (!scope || !principal.teamScoped) return undefined;
  const mine = (team: unknown) => typeof team === 'string' && principal.teamIds.includes(team);
  const ownerCheck = { principal, governance: options.governance, method: request.method };
  if (scope === 'owner') {
    const [, collection = '', id] = request.segments;
    const body = request.method === 'DELETE' ? undefined : await request.body();
    await checkOwners({ ...ownerCheck, collection, id, body });
    return undefined;
  }
  if (scope === 'virtual-key-list') {
    return (body) => (Array.isArray(body) ? body.filter((key) => mine(teamOf(key))) : body);
  }
  const legacy = request.segments[0] === 'keys';
  if (scope === 'virtual-key-create') {
    if (legacy) {
      throw outsideTeams(
        principal,
        '/api/keys creates keys without a team: use POST /api/governance/virtual-keys with team_id',
      );
    }
    const body = await request.body();
    const team = body['team_id'];
    if (!mine(team)) {
      throw outsideTeams(
        principal,
        team === undefined ? 'team_id: is required' : `team_id: '${String(team)}' is not one of your teams`,
      );
    }
    await checkOwners({ ...ownerCheck, collection: 'virtual-keys', body });
    return undefined;
  }
  const id = request.segments[legacy ? 1 : 2]!;
  let existing: unknown;
  try {
    existing = await options.governance.manage({ action: 'get', collection: 'virtual-keys', id });
  } catch (error) {
    // The module answers its own 404.
    if (error instanceof GatewayError && error.type === 'not_found') return undefined;
    throw error;
  }
  const team = teamOf(existing);
  if (!mine(team)) {
    throw outsideTeams(
      principal,
      `virtual key ${id} belongs to ${team === undefined ? 'no team' : `team '${String(team)}'`}`,
    );
  }
  if (request.method === 'PUT' || request.method === 'PATCH') {
    const body = await request.body();
    const next = body['team_id'];
    const keeps = request.method === 'PATCH' && !('team_id' in body);
    if (!keeps && !mine(next))
      throw outsideTeams(principal, `team_id: '${String(next)}' is not one of your teams`);
    await checkOwners({ ...ownerCheck, collection: 'virtual-keys', id, body });
  }
  return undefined;
}
