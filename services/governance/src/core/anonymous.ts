import { type ClientConfig, GatewayError, invalidRequest } from '@gw/shared';
import type { AuthorizeRequest, AuthorizeResult } from './governance-service.ts';

/** 400 `missing_required_header` when a configured header is absent (`client.required_headers`). */
export function checkRequiredHeaders(client: ClientConfig, headerNames: readonly string[]): void {
  const missing = client.required_headers.filter((name) => !headerNames.includes(name));
  if (missing.length === 0) return;
  throw new GatewayError({
    type: 'missing_required_header',
    message: `missing required header${missing.length > 1 ? 's' : ''}: ${missing.join(', ')}`,
    param: missing[0] ?? null,
  });
}

/**
 * The decision for a request without a virtual key. It needs no state, only the client settings, so a
 * caller that holds them (ingress in cluster mode) makes it without a governance round trip.
 */
export function authorizeAnonymous(client: ClientConfig, request: AuthorizeRequest): AuthorizeResult {
  checkRequiredHeaders(client, request.headerNames);
  if (client.enforce_virtual_keys) {
    throw new GatewayError({
      type: 'virtual_key_required',
      message:
        'a virtual key is required: send it in x-gw-vk, Authorization: Bearer, x-api-key, x-goog-api-key or api-key',
    });
  }
  const bare = request.targets.find((target) => target.provider === '');
  if (bare) {
    throw invalidRequest(
      `model: '${bare.model}' must be '<provider>/<model>' (for example openai/gpt-4o-mini); a bare model needs a virtual key with provider configs`,
      'model',
    );
  }
  return { targets: request.targets };
}
