import { methodNotAllowed, noEndpoint } from '@gw/shared';
import type { AdminRequest, AdminResult } from './admin-app.ts';

/**
 * `GET /api/whoami`: the caller as the admin API sees them (what authenticated them, role, permissions, teams),
 * for any authenticated caller (route-permissions.ts OPEN_ROUTES). The web UI shows and hides by it.
 */
export function createWhoami() {
  return async (request: AdminRequest, path: string): Promise<AdminResult> => {
    if (request.segments.length > 1) throw noEndpoint(request.method, path);
    if (request.method !== 'GET') throw methodNotAllowed({ method: request.method, path, allowed: 'GET' });
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
      },
    };
  };
}
