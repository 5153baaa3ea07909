import { Agent, buildConnector, fetch as undiciFetch } from 'undici';
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

/**
 * A WHATWG `fetch` over an agent (the MCP SDK's transports take one): every request and redirect it makes opens
 * its connections through the agent, so through the outbound address policy.
 */
export function fetchThrough(agent: Agent): (input: string | URL, init?: RequestInit) => Promise<Response> {
  return async (input, init) =>
    (await undiciFetch(input, {
      ...(init as Parameters<typeof undiciFetch>[1]),
      dispatcher: agent,
    })) as unknown as Response;
}
