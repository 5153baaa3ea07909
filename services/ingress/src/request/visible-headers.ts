import type { IncomingHttpHeaders } from 'node:http';

/** Headers a rule's condition never sees: the caller's credentials. */
const HIDDEN_HEADERS = new Set([
  'authorization',
  'proxy-authorization',
  'cookie',
  'x-api-key',
  'api-key',
  'x-goog-api-key',
  'x-gw-vk',
]);

/**
 * A request's headers as guardrail conditions and routing rules read them: lowercased names (as Node gives
 * them), repeated values joined, the caller's credentials left out.
 */
export function visibleHeaders(headers: IncomingHttpHeaders): Record<string, string> {
  const visible: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined || HIDDEN_HEADERS.has(name)) continue;
    visible[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return visible;
}
