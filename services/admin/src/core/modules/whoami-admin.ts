import type { Whoami } from '../../api-types.ts';
import type { AdminRoute } from '../http/admin-route.ts';

/**
 * `GET /api/whoami`: the caller as the admin API sees them (what authenticated them, role, permissions, teams),
 * for any authenticated caller (an `open` row). The web UI shows and hides by it.
 */
export function createWhoami(): AdminRoute[] {
  return [
    {
      method: 'GET',
      path: '/whoami',
      permission: 'open',
      handle: async (request) => {
        const principal = request.principal!;
        return {
          status: 200,
          body: {
            kind: principal.kind,
            label: principal.label,
            role: principal.roleId,
            permissions: [...principal.permissions],
            team_scoped: principal.teamScoped,
            team_ids: principal.teamIds,
            user_id: principal.userId ?? null,
          } satisfies Whoami,
        };
      },
    },
  ];
}
