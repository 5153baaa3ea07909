import type { IncomingHttpHeaders } from 'node:http';

const PREFIX = 'sk-gw-';

/**
 * The virtual key from any of the five headers docs/surfaces.md lists ("Virtual keys on each surface"). Values that are not `sk-gw-…`
 * (a provider key a caller's SDK insists on sending) are not virtual keys and are ignored.
 */
export function findVirtualKey(headers: IncomingHttpHeaders): string | undefined {
  const direct = headers['x-gw-vk'];
  if (typeof direct === 'string' && direct.startsWith(PREFIX)) return direct;
  const authorization = headers.authorization;
  if (authorization?.startsWith('Bearer ')) {
    const token = authorization.slice(7).trim();
    if (token.startsWith(PREFIX)) return token;
  }
  for (const name of ['x-api-key', 'x-goog-api-key', 'api-key'] as const) {
    const value = headers[name];
    if (typeof value === 'string' && value.startsWith(PREFIX)) return value;
  }
  return undefined;
}

/**
 * The names of the headers a request sends with a value: an empty (or blank) header is absent for
 * `client.required_headers`, so `x-team:` alone does not satisfy it.
 */
export function presentHeaderNames(headers: IncomingHttpHeaders): string[] {
  const names: string[] = [];
  for (const name in headers) {
    const value = headers[name];
    if (Array.isArray(value) ? value.some((item) => item.trim() !== '') : value?.trim()) names.push(name);
  }
  return names;
}
