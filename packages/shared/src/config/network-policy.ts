import { isIP } from 'node:net';
import { z } from 'zod';

/** An IP address, a CIDR range (`10.1.0.0/16`, `fd12::/48`) or a host name (`llm.corp.example`). */
const allowedEntrySchema = z
  .string()
  .min(1)
  .refine(
    (entry) => {
      const [address, prefix, ...rest] = entry.split('/');
      if (rest.length > 0 || address === undefined) return false;
      if (prefix === undefined) return isIP(address) !== 0 || /^[a-z0-9.-]+\.?$/i.test(address);
      const family = isIP(address);
      const bits = Number(prefix);
      return family !== 0 && /^\d+$/.test(prefix) && bits <= (family === 4 ? 32 : 128);
    },
    { error: 'must be an IP address, a CIDR range or a host name' },
  );

/**
 * The outbound address policy (docs/network.md): where gw may send requests it makes on an operator's behalf
 * (provider base URLs, MCP http/sse servers, alert channels, guardrail endpoints, the OIDC issuer). Config file
 * only: no admin API can change it, so a role that may write a URL cannot also widen where URLs may point.
 * Link-local, cloud metadata, unspecified and multicast addresses are refused whatever this says.
 */
export const networkPolicySchema = z.strictObject({
  /** Private ranges (10/8, 172.16/12, 192.168/16, 100.64/10, fc00::/7): refused unless true. */
  allow_private_addresses: z.boolean().default(false),
  /**
   * Loopback (127/8, ::1, `localhost`): allowed by default, as gw always allowed local upstreams (a model
   * server beside gw, the test suites' fakes). Set false where nothing on the gateway's host is an upstream.
   */
  allow_loopback: z.boolean().default(true),
  /**
   * Addresses, CIDR ranges and host names allowed although private, loopback or link-local (never a metadata
   * address). A host name allows whatever it resolves to, except metadata.
   */
  allowed_addresses: z.array(allowedEntrySchema).default([]),
  /**
   * URL prefixes of MCP http/sse servers any holder of `mcp:write` may add (`https://tools.corp.example/`);
   * any other http/sse server needs `mcp:remote` (Admin). The address policy applies to both.
   */
  mcp_remote_urls: z.array(z.url()).default([]),
});

export type NetworkPolicyConfig = z.infer<typeof networkPolicySchema>;
