import { Agent, buildConnector } from 'undici';
import { guardedLookup, type HostResolver, literalRefusal, type OutboundPolicy } from './outbound-address.ts';

/**
 * The connect-time half of the outbound address policy for undici: a connector that refuses a literal address
 * the policy refuses and resolves names through `guardedLookup`, so every socket gw opens for an operator's URL
 * goes to an allowed address, whatever the name resolved to when the URL was written.
 */
export function guardedConnector(
  policy: OutboundPolicy,
  options: { resolve?: HostResolver; connect?: buildConnector.BuildOptions } = {},
): buildConnector.connector {
  const connect = buildConnector({ ...options.connect, lookup: guardedLookup(policy, options.resolve) });
  return (connectOptions, callback) => {
    const refused = literalRefusal(connectOptions.hostname, policy);
    if (refused) {
      queueMicrotask(() => callback(refused, null));
      return;
    }
    connect(connectOptions, callback);
  };
}

/** An undici Agent whose every connection passes the outbound address policy. */
export function outboundAgent(policy: OutboundPolicy, options: Omit<Agent.Options, 'connect'> = {}): Agent {
  return new Agent({ ...options, connect: guardedConnector(policy) });
}
