import { redactText, SECRET_FIELD } from '@gw/shared';

/** Fields that hold a credential without saying so in their name (provider keys' and virtual keys' values). */
const VALUE_FIELD = /^(?:value|key|headers|envs?)$/;

/**
 * A read answer as a caller without `secrets:read` (Viewer) sees it: every string under a credential field
 * (SECRET_FIELD, `value`, `key`, headers) is `[redacted]`, and anything shaped like a key elsewhere too.
 * Responses are already masked for everyone (DESIGN.md §8); this removes even the masked remnants.
 */
export function redactForViewer(value: unknown, field = ''): unknown {
  const secret = field !== '' && (SECRET_FIELD.test(field) || VALUE_FIELD.test(field));
  if (typeof value === 'string') return secret ? '[redacted]' : redactText(value);
  if (Array.isArray(value)) return value.map((item) => redactForViewer(item, secret ? field : ''));
  if (value && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value).map(([name, item]) => [name, redactForViewer(item, secret ? field : name)]),
    );
  }
  return value;
}
