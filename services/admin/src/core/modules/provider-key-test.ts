import type { RouterService } from '@gw/router';
import { invalidRequest, newRequestId, notFound, toGatewayError } from '@gw/shared';
import type { KeyTestResult } from '../../api-types.ts';

/** Most time a key test may take: a provider that does not answer within it fails the test. */
const KEY_TEST_TIMEOUT_MS = 30_000;

/**
 * `POST /api/providers/{name}/keys/{id}/test`: a one-token chat completion (`ping`, `max_tokens: 1`) through
 * the router on that key alone (no other key, no fallback), with `model` from the body or else the key's first
 * named model. The answer is 200 either way, saying what happened; a key or provider that does not exist is a
 * 404, and a key that allows every model needs `model` (400). The call is a real upstream call (it costs one
 * token and counts in the key's health), charged to no virtual key.
 */
export async function testProviderKey(
  router: RouterService,
  options: { provider: string; keyId: string; body: Record<string, unknown> },
): Promise<KeyTestResult> {
  const { provider, keyId, body } = options;
  const config = await router.getProvider(provider);
  const keys = Array.isArray(config['keys']) ? (config['keys'] as Array<Record<string, unknown>>) : [];
  const key = keys.find((candidate) => candidate['id'] === keyId);
  if (!key) throw notFound(`key '${keyId}' of provider '${provider}'`);
  const named = Array.isArray(key['models'])
    ? (key['models'] as unknown[]).find((model) => typeof model === 'string' && model !== '*')
    : undefined;
  const model = body['model'] ?? named;
  if (typeof model !== 'string' || model === '')
    throw invalidRequest(`model: is required (key '${keyId}' names no model to test with)`, 'model');
  const startedAt = performance.now();
  const result = { provider, key_id: keyId, model };
  try {
    const answer = await router.complete(
      {
        operation: 'chat',
        requestId: newRequestId(),
        targets: [{ provider, model, keyIds: [keyId] }],
        messages: [{ role: 'user', content: 'ping' }],
        params: { max_tokens: 1 },
      },
      { signal: AbortSignal.timeout(KEY_TEST_TIMEOUT_MS) },
    );
    return {
      ok: true,
      ...result,
      model: answer.response.model || model,
      latency_ms: Math.round(performance.now() - startedAt),
    };
  } catch (thrown) {
    const error = toGatewayError(thrown);
    return {
      ok: false,
      ...result,
      latency_ms: Math.round(performance.now() - startedAt),
      error: { type: error.type, status: error.status, message: error.message },
    };
  }
}
