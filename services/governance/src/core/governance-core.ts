import { type ClientConfig, type GatewayConfig, GatewayError, type Logger, type Store } from '@gw/shared';
import { z } from 'zod';
import type {
  AuthorizeRequest,
  AuthorizeResult,
  GovernanceService,
  SettleRequest,
} from './governance-service.ts';
import { hashVirtualKey } from './virtual-key-hash.ts';

export const VIRTUAL_KEYS = 'virtual-keys';
export const VIRTUAL_KEY_HASHES = 'virtual-key-hashes';
const USAGE = 'virtual-key-usage';

/** A virtual key as stored (the value itself is never stored, only its hash). */
export const storedVirtualKeySchema = z.looseObject({
  id: z.string(),
  name: z.string(),
  value_hash: z.string(),
  is_active: z.boolean().default(true),
  expires_at: z.string().optional(),
});

export interface GovernanceCoreDependencies {
  store: Store;
  logger: Logger;
  client: ClientConfig;
  /** Virtual keys declared in the config file, with their values. */
  seedVirtualKeys?: GatewayConfig['governance']['virtual_keys'];
  now?: () => number;
}

/**
 * Governance core. This first cut enforces required headers, mandatory virtual keys and key status
 * (unknown, inactive, expired); budgets, rate limits and access rules build on the same Authorize/Settle flow.
 */
export class GovernanceCore implements GovernanceService {
  private readonly dependencies: GovernanceCoreDependencies;
  private readonly now: () => number;

  private constructor(dependencies: GovernanceCoreDependencies) {
    this.dependencies = dependencies;
    this.now = dependencies.now ?? Date.now;
  }

  static async start(dependencies: GovernanceCoreDependencies): Promise<GovernanceCore> {
    const core = new GovernanceCore(dependencies);
    for (const [index, key] of (dependencies.seedVirtualKeys ?? []).entries()) {
      if (!key.value) continue;
      const id = key.id ?? `config-vk-${index}`;
      const { value, ...rest } = key;
      const hash = hashVirtualKey(value);
      await dependencies.store.put(VIRTUAL_KEYS, id, { ...rest, id, value_hash: hash });
      await dependencies.store.put(VIRTUAL_KEY_HASHES, hash, id);
    }
    return core;
  }

  async authorize(request: AuthorizeRequest): Promise<AuthorizeResult> {
    const missing = this.dependencies.client.required_headers.filter(
      (name) => !request.headerNames.includes(name),
    );
    if (missing.length > 0) {
      throw new GatewayError({
        type: 'missing_required_header',
        status: 400,
        message: `missing required header${missing.length > 1 ? 's' : ''}: ${missing.join(', ')}`,
      });
    }
    if (!request.virtualKey) {
      if (this.dependencies.client.enforce_virtual_keys) {
        throw new GatewayError({
          type: 'virtual_key_required',
          status: 401,
          message:
            'a virtual key is required: send it in x-gw-vk, Authorization: Bearer, x-api-key, x-goog-api-key or api-key',
        });
      }
      return { targets: request.targets };
    }
    const key = await this.findKey(request.virtualKey);
    if (!key.is_active) {
      throw new GatewayError({
        type: 'virtual_key_inactive',
        status: 403,
        message: `virtual key '${key.name}' is inactive`,
      });
    }
    if (key.expires_at && Date.parse(key.expires_at) <= this.now()) {
      throw new GatewayError({
        type: 'virtual_key_expired',
        status: 403,
        message: `virtual key '${key.name}' expired at ${key.expires_at}`,
      });
    }
    return { targets: request.targets, virtualKeyId: key.id };
  }

  async settle(request: SettleRequest): Promise<void> {
    // Token totals per key; cost, budgets and limits are charged here as well once they are configured.
    const usage = (await this.dependencies.store.get(USAGE, request.virtualKeyId)) as
      | { requests: number; tokens: number }
      | undefined;
    await this.dependencies.store.put(USAGE, request.virtualKeyId, {
      requests: (usage?.requests ?? 0) + 1,
      tokens: (usage?.tokens ?? 0) + request.usage.total_tokens,
    });
  }

  private async findKey(value: string) {
    const id = await this.dependencies.store.get(VIRTUAL_KEY_HASHES, hashVirtualKey(value));
    const stored = typeof id === 'string' ? await this.dependencies.store.get(VIRTUAL_KEYS, id) : undefined;
    const parsed = storedVirtualKeySchema.safeParse(stored);
    if (!parsed.success) {
      throw new GatewayError({
        type: 'virtual_key_invalid',
        status: 401,
        message: 'the virtual key is not valid',
      });
    }
    return parsed.data;
  }
}
