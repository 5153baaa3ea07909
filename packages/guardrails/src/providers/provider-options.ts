import type { OutboundPolicy, SecretLookup } from '@gw/shared';
import type { Dispatcher } from 'undici';

/** What every remote guardrail provider is built with, whichever its type. */
export interface ProviderOptions {
  /** Where `env.NAME` credentials of profiles resolve (the process's environment, injected by main). */
  environment: NodeJS.ProcessEnv;
  /** Where secret-manager references (`vault.…`: docs/vault.md) resolve: the process's resolver, read at use. */
  secrets?: SecretLookup | undefined;
  /**
   * Where remote profiles may send (the config file's outbound address policy, docs/network.md) and an agent
   * that applies it at every connection; without it (unit tests) they send anywhere.
   */
  outbound?: { policy: OutboundPolicy; dispatcher: Dispatcher } | undefined;
}
