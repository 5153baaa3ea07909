// The one API client of the UI: every call goes to gw's public admin API (/api/*, /auth/*), with the admin
// token typed at login (sessionStorage) or the single sign-on cookie and its CSRF token. gw's error body
// ({"error": {"message", "type", "code", "param"}}) becomes an ApiError whose message the pages show.

const TOKEN_KEY = 'gw.admin-token';

export class ApiError extends Error {
  readonly status: number;
  readonly type: string | undefined;
  readonly code: string | undefined;
  constructor(status: number, message: string, type?: string, code?: string) {
    super(message);
    this.status = status;
    this.type = type;
    this.code = code;
  }
}

let csrfToken: string | undefined;

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
  options: { method?: string; body?: unknown; query?: Query } = {},
): Promise<T> {
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
    throw new ApiError(0, `the gateway did not answer: ${(error as Error).message}`);
  }
  const text = await response.text();
  let body: unknown;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    body = text;
  }
  if (!response.ok) {
    const error = (body as { error?: { message?: string; type?: string; code?: string } } | undefined)?.error;
    throw new ApiError(
      response.status,
      error?.message ?? `${method} ${path} answered ${response.status}`,
      error?.type,
      error?.code,
    );
  }
  return body as T;
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
