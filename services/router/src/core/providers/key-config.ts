import { GatewayError } from '@gw/shared';
import type { z } from 'zod';
import type { ResolvedKey } from './adapter.ts';

/** A provider whose keys or settings cannot work: 400, so the operator's mistake is not retried. */
export function misconfigured(provider: string, message: string): GatewayError {
  return new GatewayError({
    type: 'provider_not_configured',
    message: `provider '${provider}': ${message}`,
    provider,
  });
}

/** A key's provider-specific `config`, validated with the adapter's schema; a mistake names the field. */
export function parseKeyConfig<Schema extends z.ZodType>(
  schema: Schema,
  options: { provider: string; key: ResolvedKey | undefined },
): z.infer<Schema> {
  const parsed = schema.safeParse(options.key?.config ?? {});
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  throw misconfigured(
    options.provider,
    `key config ${issue?.path.join('.') || ''}: ${issue?.message ?? 'invalid'}`,
  );
}
