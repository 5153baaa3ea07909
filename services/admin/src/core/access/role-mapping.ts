import type { RoleMapping } from '@gw/shared';
import type { RoleDefinition } from './permissions.ts';

/** The value of a claim at a dotted path (`realm_access.roles`); undefined when a step is missing. */
function claimAt(claims: Record<string, unknown>, path: string): unknown {
  let value: unknown = claims;
  for (const step of path.split('.')) {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
    value = (value as Record<string, unknown>)[step];
  }
  return value;
}

function claimMatches(value: unknown, expected: string): boolean {
  if (Array.isArray(value)) return value.some((item) => String(item) === expected);
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean')
    return String(value) === expected;
  return false;
}

/**
 * The roles and teams the rules give an identity (an OIDC login's claims, or `{ groups: [...] }` for a SCIM
 * user's groups): every matching rule's role, once each, in rule order, and the union of their teams.
 */
export function mapIdentity(
  claims: Record<string, unknown>,
  rules: readonly RoleMapping[],
): { roles: string[]; teamIds: string[] } {
  const roles = new Set<string>();
  const teamIds = new Set<string>();
  for (const rule of rules) {
    if (!claimMatches(claimAt(claims, rule.claim), rule.value)) continue;
    roles.add(rule.role);
    for (const team of rule.team_ids) teamIds.add(team);
  }
  return { roles: [...roles], teamIds: [...teamIds] };
}

/** How much a role may do: what it may change first, then whether that is narrowed to teams, then what it reads. */
function privilege(role: RoleDefinition): [number, number, number] {
  const writes = role.permissions.filter((permission) => permission.endsWith(':write')).length;
  return [writes, role.team_scoped ? 0 : 1, role.permissions.length];
}

/**
 * The highest privilege among roles (SPEC.md "Authentication" 5: when several apply, the highest wins): Admin
 * over Developer over Viewer, and custom roles ranked the same way (more write permissions, then not narrowed
 * to teams, then more permissions); the first given wins a tie. Undefined for no roles.
 */
export function highestRole(roles: readonly RoleDefinition[]): RoleDefinition | undefined {
  let best: RoleDefinition | undefined;
  let bestRank: [number, number, number] | undefined;
  for (const role of roles) {
    const rank = privilege(role);
    if (
      !bestRank ||
      rank[0] > bestRank[0] ||
      (rank[0] === bestRank[0] &&
        (rank[1] > bestRank[1] || (rank[1] === bestRank[1] && rank[2] > bestRank[2])))
    ) {
      best = role;
      bestRank = rank;
    }
  }
  return best;
}
