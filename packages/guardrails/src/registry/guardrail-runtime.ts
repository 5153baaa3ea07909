import type { GuardrailsConfig, Logger, OutboundPolicy, SecretLookup } from '@gw/shared';
import { outboundAgent } from '@gw/shared/outbound';
import type { ChangeFollower } from '@gw/shared/store';
import { compileGuardrails, GuardrailSet } from '../guardrail-set.ts';
import type { ProviderOptions } from '../providers/provider-options.ts';
import type { GuardrailRegistry } from './guardrail-registry.ts';

export interface GuardrailRuntimeOptions {
  /** The config file's `guardrails` section, seeded into the store (or used alone without one). */
  config: GuardrailsConfig;
  /** The store's profiles and rules; none in a cluster ingress without REDIS_URL. */
  registry?: GuardrailRegistry | undefined;
  logger: Logger;
  /** Where `env.NAME` credentials of profiles resolve (injected by main). */
  environment: NodeJS.ProcessEnv;
  /** Where secret-manager references of profiles resolve (docs/vault.md): the process's resolver. */
  secrets?: SecretLookup | undefined;
  /** Where remote profiles may send: the config file's outbound address policy (docs/network.md). */
  outbound?: OutboundPolicy | undefined;
}

/**
 * The guardrails one ingress process applies: compiled at start, recompiled when the admin API changes the
 * store (every replica follows the change channel), the new set swapped in whole, so a request sees one set.
 */
export class GuardrailRuntime {
  private set: GuardrailSet = GuardrailSet.EMPTY;
  private follower: ChangeFollower | undefined;
  private reloading: Promise<void> | undefined;
  private again = false;

  private readonly options: GuardrailRuntimeOptions;
  /** The policy and the agent every remote profile of every compiled set sends through. */
  private readonly outbound: ProviderOptions['outbound'];

  private constructor(options: GuardrailRuntimeOptions) {
    this.options = options;
    this.outbound = options.outbound && {
      policy: options.outbound,
      dispatcher: outboundAgent(options.outbound),
    };
  }

  /** The set in force; read once per request. */
  get current(): GuardrailSet {
    return this.set;
  }

  /** Compiles the config's guardrails (a bad one throws GuardrailConfigError naming the field), then follows the store. */
  static async start(options: GuardrailRuntimeOptions): Promise<GuardrailRuntime> {
    const runtime = new GuardrailRuntime(options);
    // The config file's own rules compile here first, so a bad one fails start-up naming its field.
    runtime.set = await compileGuardrails(options.config, {
      environment: options.environment,
      secrets: options.secrets,
      outbound: runtime.outbound,
    });
    const { registry } = options;
    if (!registry) return runtime;
    await registry.seed(options.config);
    runtime.follower = await registry.follow({
      onChange: () => runtime.reload(),
      resync: () => runtime.reload(),
      reseed: () => registry.seed(options.config),
    });
    await runtime.reload();
    return runtime;
  }

  /** Recompiles from the store; a change during a reload is applied by one more reload after it. */
  reload(): Promise<void> {
    if (this.reloading) {
      this.again = true;
      return this.reloading;
    }
    this.reloading = (async () => {
      do {
        this.again = false;
        await this.reloadOnce();
      } while (this.again);
    })().finally(() => {
      this.reloading = undefined;
    });
    return this.reloading;
  }

  private async reloadOnce(): Promise<void> {
    const { registry, logger } = this.options;
    if (!registry) return;
    try {
      const previous = this.set;
      const next = await compileGuardrails(await registry.read(), {
        environment: this.options.environment,
        secrets: this.options.secrets,
        outbound: this.outbound,
        previous,
        field: 'stored guardrails',
      });
      this.set = next;
      previous.retire(next);
    } catch (error) {
      logger.error({ err: error }, 'guardrails could not be reloaded; the previous ones stay in force');
    }
  }

  /** Closes it as a resource of a composition root (its AsyncDisposableStack). */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  async close(): Promise<void> {
    await this.follower?.close();
    await this.reloading;
    this.set.close();
    await this.outbound?.dispatcher.close();
  }
}
