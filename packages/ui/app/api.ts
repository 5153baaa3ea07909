// The one API client of the UI: every call goes to gw's public admin API (/api/*, /auth/*), with the admin
// token typed at login (sessionStorage) or the single sign-on cookie and its CSRF token. gw's error body
// ({"error": {"message", "type", "code", "param"}}) becomes an ApiError whose message the pages show.
import type { ErrorBody, SystemSettings, SystemSettingsView } from '@gw/admin/api-types';

const TOKEN_KEY = 'gw.admin-token';

export class ApiError extends Error {
  readonly status: number;
  readonly type: string | undefined;
  readonly code: string | null | undefined;
  constructor(status: number, message: string, type?: string, code?: string | null) {
    super(message);
    this.status = status;
    this.type = type;
    this.code = code;
  }
}

let csrfToken: string | undefined;

/**
 * What every call learns of the session and of the gateway, for the one place that acts on each: a 401 on a
 * signed-in call ends the session with the API's reason (auth.tsx); no answer (or a proxy's 502–504) means the
 * gateway does not answer, and any answer that it does again (banners.tsx).
 */
export interface ApiEvents {
  unauthorized(reason: string): void;
  reachable(answering: boolean): void;
}

const listeners = new Set<Partial<ApiEvents>>();

/** Follows the API's events until the returned function is called. */
export function onApiEvents(events: Partial<ApiEvents>): () => void {
  listeners.add(events);
  return () => listeners.delete(events);
}

function emit<K extends keyof ApiEvents>(name: K, ...values: Parameters<ApiEvents[K]>): void {
  for (const events of listeners)
    (events[name] as ((...args: typeof values) => void) | undefined)?.(...values);
}

/** Asks the gateway whether it answers (the cheapest call any signed-in caller may make); the events say. */
export function checkGateway(): void {
  api('/api/whoami').catch(() => undefined);
}

/** Statuses a proxy or load balancer answers for a gateway behind it that does not (no gw error body). */
const UNANSWERED = new Set([502, 503, 504]);

export const getToken = () => sessionStorage.getItem(TOKEN_KEY) ?? undefined;

export function setToken(token: string | undefined) {
  if (token) sessionStorage.setItem(TOKEN_KEY, token);
  else sessionStorage.removeItem(TOKEN_KEY);
}

export function setCsrfToken(token: string | undefined) {
  csrfToken = token;
}

export type Query = Record<string, string | number | undefined>;

function withQuery(path: string, query?: Query): string {
  if (!query) return path;
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query))
    if (value !== undefined && value !== '') params.set(name, String(value));
  const text = params.toString();
  return text ? `${path}?${text}` : path;
}

export async function api<T = unknown>(
  path: string,
  options: { method?: string; body?: unknown; query?: Query; signingIn?: boolean } = {},
): Promise<T> {
  if (path === '/api/config' && options.method === 'PUT' && !(await confirmOpening(options.body)))
    throw new Error('not saved: the admin API stays closed to anonymous callers');
  const method = options.method ?? 'GET';
  const headers: Record<string, string> = { accept: 'application/json' };
  const token = getToken();
  if (token) headers.authorization = `Bearer ${token}`;
  else if (csrfToken && method !== 'GET') headers['x-csrf-token'] = csrfToken;
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  let response: Response;
  try {
    response = await fetch(withQuery(path, options.query), {
      method,
      headers,
      credentials: 'same-origin',
      ...(options.body !== undefined && { body: JSON.stringify(options.body) }),
    });
  } catch (error) {
    emit('reachable', false);
    throw new ApiError(0, `the gateway did not answer: ${(error as Error).message}`);
  }
  const text = await response.text().catch(() => '');
  let body: unknown;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    body = text;
  }
  // Any answer with an `error` is gw's error body; a proxy's (an HTML 502) has none.
  const error = (body as Partial<ErrorBody> | undefined)?.error;
  emit('reachable', !(UNANSWERED.has(response.status) && !error));
  if (!response.ok) {
    // A signed-in call refused for who made it: the session is over (expired, revoked), whatever page asked.
    if (response.status === 401 && (token || csrfToken) && !options.signingIn)
      emit('unauthorized', error?.message ?? 'the session is no longer valid');
    throw new ApiError(
      response.status,
      error?.message ?? `${method} ${path} answered ${response.status}`,
      error?.type,
      error?.code,
    );
  }
  return body as T;
}

/**
 * A settings change that opens the admin API to anonymous callers (`client.allow_anonymous_admin` turned on) is
 * saved only once the operator confirms it, whichever form made it: anyone who reaches the port may then
 * read and change gw.
 */
async function confirmOpening(body: unknown): Promise<boolean> {
  // The body is what a form sent, the JSON one included: any part may be missing.
  const client = (body as Partial<SystemSettings> | undefined)?.client;
  if (client?.allow_anonymous_admin !== true) return true;
  const current = await api<SystemSettingsView>('/api/config');
  if (current.client?.allow_anonymous_admin === true) return true;
  return window.confirm(
    'Allow anonymous admin access?\n\nAnyone who can reach the admin port will read and change gw without a token, until it is turned off again.',
  );
}

/** The live tail's WebSocket: a browser cannot set Authorization, so the token rides as a subprotocol. */
export function openLogStream(query: Query): WebSocket {
  const scheme = location.protocol === 'https:' ? 'wss' : 'ws';
  const url = `${scheme}://${location.host}${withQuery('/api/logs/stream', query)}`;
  const token = getToken();
  const protocols = ['gw-admin'];
  if (token) {
    const bytes = new TextEncoder().encode(token);
    const encoded = btoa(String.fromCharCode(...bytes))
      .replace(/\+/g, '-')
      .replace(/\//g, '_')
      .replace(/=+$/, '');
    protocols.push(`gw-bearer.${encoded}`);
  }
  return new WebSocket(url, protocols);
}
