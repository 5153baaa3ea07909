import { GatewayError, internalError } from '@gw/shared';
import type { FailedCheck } from '@gw/shared/store';
import { type AdmissionCheck, LEVEL_TEXT } from './admission-checks.ts';
import { MICROS_PER_USD } from './pricing.ts';
import type { StoredVirtualKey } from './resources.ts';

/** 401/403 for a key that does not authenticate: unknown, deactivated or past its expiry. */
export function assertKeyUsable(
  key: StoredVirtualKey | undefined,
  now: number,
): asserts key is StoredVirtualKey {
  if (!key) throw new GatewayError({ type: 'virtual_key_invalid', message: 'the virtual key is not valid' });
  if (!key.is_active) {
    throw new GatewayError({
      type: 'virtual_key_inactive',
      message: `virtual key '${key.name}' is inactive`,
    });
  }
  if (key.expires_at && Date.parse(key.expires_at) <= now) {
    throw new GatewayError({
      type: 'virtual_key_expired',
      message: `virtual key '${key.name}' expired at ${key.expires_at}`,
    });
  }
}

/**
 * 402 or 429 for a refused admission, naming the exhausted limit, its level (`code`) and when it resets
 * (`Retry-After`). `failed` is the check the store found exhausted (group -1: the required checks); one the
 * admission did not ask for is gw's own fault (500), never a limit the caller is told it reached.
 */
export function admissionRefusal(options: {
  failed: FailedCheck;
  required: AdmissionCheck[];
  alternatives: AdmissionCheck[][];
  now: number;
}): GatewayError {
  const { failed, now } = options;
  const meaning = (failed.group === -1 ? options.required : options.alternatives[failed.group])?.[
    failed.index
  ]?.meaning;
  if (!meaning)
    return internalError(`admission was refused by a check it did not ask for: ${JSON.stringify(failed)}`);
  const who = `${LEVEL_TEXT[meaning.level]} '${meaning.name}'`;
  const retryAfter = Math.max(1, Math.ceil((meaning.endMs - now) / 1000));
  const resets = new Date(meaning.endMs).toISOString();
  if (meaning.kind === 'budget') {
    const used = failed.current / MICROS_PER_USD;
    return new GatewayError({
      type: 'budget_exceeded',
      code: meaning.level,
      message: `budget of ${who} is exhausted: $${used.toFixed(6)} used of ${meaning.limitText}; it resets at ${resets}`,
      retryAfter,
    });
  }
  return new GatewayError({
    type: meaning.kind === 'requests' ? 'request_limit_exceeded' : 'token_limit_exceeded',
    code: meaning.level,
    message: `${meaning.kind === 'requests' ? 'request' : 'token'} limit of ${who} reached (${meaning.limitText}); retry after ${resets}`,
    retryAfter,
  });
}

/**
 * A refusal of a known key, naming the key and the owners it was refused for: the request's log record links
 * the refusal to them (the caller's answer never carries these ids).
 */
export function refusedFor(error: unknown, owners: NonNullable<GatewayError['owners']>): unknown {
  if (!(error instanceof GatewayError)) return error;
  const { virtualKeyId, virtualKeyName, teamId, customerId, userId, businessUnitId } = owners;
  return new GatewayError({
    ...error.toJSON(),
    owners: { virtualKeyId, virtualKeyName, teamId, customerId, userId, businessUnitId },
    cause: error.cause,
  });
}
