import { droppedQuerySchema, type LogStore, logQueryParamsSchema, logStatsParamsSchema } from '@gw/logs';
import { GatewayError, invalidRequest, notFound, serviceUnavailable, validate } from '@gw/shared';
import type { Principal } from '../access/admin-principal.ts';
import { type AdminRoute, route } from '../http/admin-route.ts';

/**
 * A team-scoped role (Developer) reads the logs of its teams only: the query's `team_id` must be one of them,
 * and is set to the one team a caller has when it names none. Others' queries are unchanged.
 */
export function teamScopedLogFilter(
  principal: Principal | undefined,
  query: URLSearchParams,
): URLSearchParams {
  if (!principal?.teamScoped) return query;
  const asked = query.get('team_id');
  const teams = principal.teamIds;
  const outside = (what: string) =>
    new GatewayError({
      type: 'forbidden',
      code: 'team_scope',
      param: 'team_id',
      message: `${what}; role ${principal.roleId} reads logs of its teams only (yours: ${teams.join(', ') || 'none'})`,
    });
  if (asked !== null) {
    if (!teams.includes(asked)) throw outside(`team_id ${asked} is not one of your teams`);
    return query;
  }
  if (teams.length !== 1) {
    if (teams.length === 0) throw outside('you belong to no team');
    throw invalidRequest(`team_id: name one of your teams (${teams.join(', ')})`, 'team_id');
  }
  const scoped = new URLSearchParams(query);
  scoped.set('team_id', teams[0]!);
  return scoped;
}

export interface LogsAdminOptions {
  /** Where request logs are kept (SQLite embedded, PostgreSQL in a cluster); none when logs are off here. */
  store?: LogStore | undefined;
  /** Why there is no store, as the 503 says it (a cluster without GW_LOGS_DATABASE_URL). */
  unavailable?: string | undefined;
}

/**
 * `GET /api/logs` (filters, keyset pages, sort), `/api/logs/{id}`, `/api/logs/stats` and `/api/logs/dropped`
 * (docs/logs.md). A bad parameter is a 400 naming it; `/api/logs/stream` is the WebSocket of logs-stream.ts.
 */
export function createLogsAdmin(options: LogsAdminOptions): AdminRoute[] {
  function storeOf(): LogStore {
    if (options.store) return options.store;
    throw serviceUnavailable(options.unavailable ?? 'request logs are off on this gateway');
  }
  const read = (path: string, handle: AdminRoute['handle']): AdminRoute => ({
    method: 'GET',
    path,
    permission: 'logs:read',
    handle,
  });

  return [
    read('/logs', async (request) => {
      const store = storeOf();
      const query = teamScopedLogFilter(request.principal, request.query ?? new URLSearchParams());
      return { status: 200, body: await store.query(validate(logQueryParamsSchema, query)) };
    }),
    // Dropped counts name no owner, key or content (a reason and a minute): every `logs:read` reads them, a
    // Developer too, to see why its requests were refused for overload.
    read('/logs/dropped', async (request) => ({
      status: 200,
      body: await storeOf().dropped(
        validate(droppedQuerySchema, Object.fromEntries(request.query ?? new URLSearchParams())),
      ),
    })),
    read('/logs/stats', async (request) => {
      const store = storeOf();
      const query = teamScopedLogFilter(request.principal, request.query ?? new URLSearchParams());
      return { status: 200, body: await store.stats(validate(logStatsParamsSchema, query)) };
    }),
    read('/logs/stream', async (request) => {
      throw invalidRequest(
        `${request.path} is a WebSocket: connect with Upgrade: websocket (the same filters as /api/logs)`,
      );
    }),
    route({
      method: 'GET',
      path: '/logs/:id',
      permission: 'logs:read',
      handle: async (request) => {
        const { id } = request.params;
        const store = storeOf();
        const principal = request.principal;
        teamScopedLogFilter(principal, request.query ?? new URLSearchParams());
        const record = await store.get(id);
        // Another team's record is not there, for a team-scoped caller.
        if (!record || (principal?.teamScoped && !principal.teamIds.includes(record.team_id ?? '')))
          throw notFound(`request log ${id}`);
        return { status: 200, body: record };
      },
    }),
  ];
}
