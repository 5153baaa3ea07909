import { lookup as dnsLookup, type LookupAddress, type LookupAllOptions, type LookupOptions } from 'node:dns';
import { isIP } from 'node:net';
import type { NetworkPolicyConfig } from '../config/network-policy.ts';
import { GatewayError } from '../errors/gateway-error.ts';

/**
 * One outbound address policy for every URL gw calls on an operator's behalf (docs/network.md): the URL is
 * parsed, its host resolved, and every address it resolves to classified after normalisation (IPv4-mapped,
 * -compatible, NAT64 and 6to4 IPv6 forms are their IPv4 address; hex, octal, integer and short IPv4 forms are
 * read as `inet_aton` reads them). The same check runs again at connect time (`guardedLookup`, and
 * `outboundAgent` of `@gw/shared/outbound`), so a name that resolved public when written and private when
 * called (DNS rebinding) is refused then.
 */

/** What an address is, for the policy. */
export type AddressKind =
  | 'public'
  | 'loopback'
  | 'private'
  | 'link-local'
  | 'metadata'
  | 'unspecified'
  | 'reserved';

/** Cloud instance-metadata host names (compared without a trailing dot, lower-case). */
const METADATA_NAMES = new Set([
  'metadata',
  'metadata.google.internal',
  'metadata.goog',
  'metadata.azure.com',
  'instance-data',
  'instance-data.ec2.internal',
]);

type Ipv4 = number;

/** An IPv4 address as `inet_aton` reads it: 1 to 4 parts, each decimal, octal (`0…`) or hex (`0x…`). */
export function parseIpv4(text: string): Ipv4 | undefined {
  const host = text.endsWith('.') ? text.slice(0, -1) : text;
  const parts = host.split('.');
  if (parts.length === 0 || parts.length > 4) return undefined;
  const values: number[] = [];
  for (const part of parts) {
    let value: number;
    if (/^0x[0-9a-f]*$/i.test(part)) value = part.length === 2 ? 0 : Number.parseInt(part.slice(2), 16);
    else if (/^0[0-7]*$/.test(part)) value = part.length === 1 ? 0 : Number.parseInt(part.slice(1), 8);
    else if (/^[1-9][0-9]*$/.test(part)) value = Number(part);
    else return undefined;
    if (!Number.isSafeInteger(value)) return undefined;
    values.push(value);
  }
  const last = values.pop() as number;
  if (values.some((value) => value > 255)) return undefined;
  if (last >= 2 ** (8 * (4 - values.length))) return undefined;
  return values.reduce((sum, value, index) => sum + value * 2 ** (8 * (3 - index)), 0) + last;
}

/** 16 bytes of an IPv6 address (zone id ignored, an embedded dotted IPv4 tail read), or undefined. */
function parseIpv6(text: string): number[] | undefined {
  const host = text.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  if (isIP(host) !== 6) return undefined;
  let head = host;
  const tail: number[] = [];
  const dotted = /^(.*:)(\d+\.\d+\.\d+\.\d+)$/.exec(host);
  if (dotted) {
    const value = parseIpv4(dotted[2] as string);
    if (value === undefined) return undefined;
    head = `${dotted[1]}${(value >>> 16).toString(16)}:${(value & 0xffff).toString(16)}`;
  }
  const [left, right] = head.split('::') as [string, string | undefined];
  const groups = (side: string) =>
    side === '' ? [] : side.split(':').map((group) => Number.parseInt(group, 16));
  const leftGroups = groups(left);
  const rightGroups = right === undefined ? [] : groups(right);
  const zeros = 8 - leftGroups.length - rightGroups.length;
  const all = [...leftGroups, ...Array<number>(right === undefined ? 0 : zeros).fill(0), ...rightGroups];
  if (all.length !== 8) return undefined;
  for (const group of all) tail.push(group >> 8, group & 0xff);
  return tail;
}

const ipv4Of = (bytes: number[], at: number): Ipv4 =>
  (((bytes[at] as number) << 24) +
    ((bytes[at + 1] as number) << 16) +
    ((bytes[at + 2] as number) << 8) +
    (bytes[at + 3] as number)) >>>
  0;

const allZero = (bytes: number[], from: number, to: number) =>
  bytes.slice(from, to).every((byte) => byte === 0);

/** The IPv4 address an IPv6 address stands for (mapped, compatible, SIIT, NAT64, 6to4), if any. */
function embeddedIpv4(bytes: number[]): Ipv4 | undefined {
  // ::ffff:a.b.c.d (mapped) and ::ffff:0:a.b.c.d (SIIT)
  if (allZero(bytes, 0, 10) && bytes[10] === 0xff && bytes[11] === 0xff) return ipv4Of(bytes, 12);
  if (allZero(bytes, 0, 8) && bytes[8] === 0xff && bytes[9] === 0xff && allZero(bytes, 10, 12))
    return ipv4Of(bytes, 12);
  // ::a.b.c.d (compatible; :: and ::1 are IPv6's own)
  if (allZero(bytes, 0, 12) && !allZero(bytes, 12, 15)) return ipv4Of(bytes, 12);
  // 64:ff9b::a.b.c.d (NAT64 well-known prefix) and 64:ff9b:1::/48 (local-use)
  if (bytes[0] === 0 && bytes[1] === 0x64 && bytes[2] === 0xff && bytes[3] === 0x9b) {
    if (allZero(bytes, 4, 12)) return ipv4Of(bytes, 12);
    if (bytes[4] === 0 && bytes[5] === 1) return ipv4Of(bytes, 12);
  }
  // 2002:a.b.c.d::/48 (6to4)
  if (bytes[0] === 0x20 && bytes[1] === 0x02) return ipv4Of(bytes, 2);
  return undefined;
}

const inRange = (address: Ipv4, base: string, bits: number) =>
  bits === 0 || address >>> (32 - bits) === (parseIpv4(base) as number) >>> (32 - bits);

function classifyIpv4(address: Ipv4): AddressKind {
  if (address === parseIpv4('169.254.169.254') || address === parseIpv4('100.100.100.200')) return 'metadata';
  if (inRange(address, '0.0.0.0', 8)) return 'unspecified';
  if (inRange(address, '127.0.0.0', 8)) return 'loopback';
  if (inRange(address, '169.254.0.0', 16)) return 'link-local';
  if (
    inRange(address, '10.0.0.0', 8) ||
    inRange(address, '172.16.0.0', 12) ||
    inRange(address, '192.168.0.0', 16) ||
    inRange(address, '100.64.0.0', 10)
  )
    return 'private';
  if (inRange(address, '224.0.0.0', 3)) return 'reserved'; // multicast, 240/4 and broadcast
  return 'public';
}

function classifyIpv6(bytes: number[]): AddressKind {
  const embedded = embeddedIpv4(bytes);
  if (embedded !== undefined) return classifyIpv4(embedded);
  if (allZero(bytes, 0, 16)) return 'unspecified';
  if (allZero(bytes, 0, 15) && bytes[15] === 1) return 'loopback';
  const first = bytes[0] as number;
  const second = bytes[1] as number;
  // fd00:ec2::254, the EC2 metadata service over IPv6
  if (
    first === 0xfd &&
    second === 0 &&
    bytes[2] === 0x0e &&
    bytes[3] === 0xc2 &&
    allZero(bytes, 4, 14) &&
    bytes[14] === 0x02 &&
    bytes[15] === 0x54
  )
    return 'metadata';
  if (first === 0xfe && (second & 0xc0) === 0x80) return 'link-local';
  if (first === 0xfe && (second & 0xc0) === 0xc0) return 'private'; // fec0::/10, deprecated site-local
  if ((first & 0xfe) === 0xfc) return 'private';
  if (first === 0xff) return 'reserved';
  return 'public';
}

/**
 * The kind of an IP address in any notation (`[::ffff:a9fe:a9fe]`, `0xa9fea9fe`, `169.254.43518`…);
 * undefined for a host name.
 */
export function classifyAddress(host: string): AddressKind | undefined {
  const bare = host.replace(/^\[|\]$/g, '');
  if (bare.includes(':')) {
    const bytes = parseIpv6(bare);
    return bytes ? classifyIpv6(bytes) : undefined;
  }
  const ipv4 = parseIpv4(bare);
  return ipv4 === undefined ? undefined : classifyIpv4(ipv4);
}

/** A host name as compared: lower case, without brackets or a trailing dot. */
function normaliseName(host: string): string {
  return host
    .replace(/^\[|\]$/g, '')
    .replace(/\.$/, '')
    .toLowerCase();
}

/** The policy of a config's `network` section, ready to check addresses. */
export interface OutboundPolicy {
  readonly allowPrivate: boolean;
  readonly allowLoopback: boolean;
  /** Host names (normalised) allowed whatever they resolve to, metadata excepted. */
  readonly allowedNames: ReadonlySet<string>;
  /** Addresses and ranges allowed although private, loopback or link-local. */
  readonly allowedRanges: ReadonlyArray<{ bytes: number[]; bits: number }>;
}

/** 16 bytes of any address: IPv4 as its mapped IPv6 form, so one range list holds both families. */
function addressBytes(address: string): number[] | undefined {
  const bare = address.replace(/^\[|\]$/g, '');
  if (bare.includes(':')) {
    const bytes = parseIpv6(bare);
    if (!bytes) return undefined;
    const embedded = embeddedIpv4(bytes);
    return embedded === undefined ? bytes : addressBytes(ipv4Text(embedded));
  }
  const ipv4 = parseIpv4(bare);
  if (ipv4 === undefined) return undefined;
  return [
    ...Array<number>(10).fill(0),
    0xff,
    0xff,
    ipv4 >>> 24,
    (ipv4 >>> 16) & 0xff,
    (ipv4 >>> 8) & 0xff,
    ipv4 & 0xff,
  ];
}

function ipv4Text(address: Ipv4): string {
  return [address >>> 24, (address >>> 16) & 0xff, (address >>> 8) & 0xff, address & 0xff].join('.');
}

function inAllowedRange(bytes: number[], range: { bytes: number[]; bits: number }): boolean {
  for (let bit = 0; bit < range.bits; bit += 8) {
    const mask = range.bits - bit >= 8 ? 0xff : (0xff << (8 - (range.bits - bit))) & 0xff;
    const index = bit / 8;
    if (((bytes[index] as number) & mask) !== ((range.bytes[index] as number) & mask)) return false;
  }
  return true;
}

/** The policy a config's `network` section describes; the defaults when there is none. */
export function outboundPolicy(config?: Partial<NetworkPolicyConfig>): OutboundPolicy {
  const allowedNames = new Set<string>();
  const allowedRanges: Array<{ bytes: number[]; bits: number }> = [];
  for (const entry of config?.allowed_addresses ?? []) {
    const [address = '', prefix] = entry.split('/');
    const bytes = addressBytes(address);
    if (!bytes) {
      allowedNames.add(normaliseName(address));
      continue;
    }
    const ipv4 = !address.includes(':');
    const bits = prefix === undefined ? 128 : Number(prefix) + (ipv4 ? 96 : 0);
    allowedRanges.push({ bytes, bits });
  }
  return {
    allowPrivate: config?.allow_private_addresses ?? false,
    allowLoopback: config?.allow_loopback ?? true,
    allowedNames,
    allowedRanges,
  };
}

/** Why an address (resolved from `host`) may not be called, or undefined when it may. */
function addressRefusal(address: string, policy: OutboundPolicy, host = address): string | undefined {
  const kind = classifyAddress(address);
  if (kind === undefined) return `${address} is not an IP address`;
  if (kind === 'public') return undefined;
  const shown = normaliseName(host) === normaliseName(address) ? address : `${host} (${address})`;
  if (kind === 'metadata') return `${shown} is a cloud metadata address`;
  if (kind === 'unspecified') return `${shown} is an unspecified address`;
  if (kind === 'reserved') return `${shown} is a multicast or reserved address`;
  const bytes = addressBytes(address) as number[];
  if (policy.allowedNames.has(normaliseName(host))) return undefined;
  if (policy.allowedRanges.some((range) => inAllowedRange(bytes, range))) return undefined;
  if (kind === 'loopback' && policy.allowLoopback) return undefined;
  if (kind === 'private' && policy.allowPrivate) return undefined;
  const allow =
    kind === 'loopback'
      ? 'network.allow_loopback'
      : kind === 'private'
        ? 'network.allow_private_addresses or network.allowed_addresses'
        : 'network.allowed_addresses';
  return `${shown} is a ${kind} address (allowed only by the config file's ${allow})`;
}

/** Why a host name may not be called before it is even resolved (metadata names), or undefined. */
function nameRefusal(host: string): string | undefined {
  const name = normaliseName(host);
  return METADATA_NAMES.has(name) ? `${name} is a cloud metadata host` : undefined;
}

/** A request gw would make on an operator's behalf that the outbound address policy refuses. */
export class OutboundAddressError extends GatewayError {
  constructor(message: string, param?: string) {
    super({
      type: 'invalid_request',
      message,
      // Also what transports show of a connect error (`code`), so a refused connection says why.
      code: OUTBOUND_REFUSED_CODE,
      ...(param !== undefined ? { param } : {}),
    });
  }
}

/** The `code` of every refusal of the outbound address policy. */
export const OUTBOUND_REFUSED_CODE = 'outbound_address_refused';

/** Resolves a host name to every address it has (the system resolver by default; tests inject one). */
export type HostResolver = (host: string) => Promise<LookupAddress[]>;

const systemResolver: HostResolver = (host) =>
  new Promise((resolve, reject) =>
    dnsLookup(host, { all: true, verbatim: true }, (error, addresses) =>
      error ? reject(error) : resolve(addresses),
    ),
  );

/** Every refusal of a host (literal or name), its addresses resolved with `resolve`. */
async function hostRefusal(
  host: string,
  policy: OutboundPolicy,
  resolve: HostResolver,
): Promise<string | undefined> {
  const named = nameRefusal(host);
  if (named) return named;
  if (classifyAddress(host) !== undefined) return addressRefusal(host, policy);
  let addresses: LookupAddress[];
  try {
    addresses = await resolve(normaliseName(host));
  } catch {
    // A name that does not resolve now reaches nothing now; when it comes to resolve, the connect-time check
    // (guardedLookup) decides. Refusing it would refuse every upstream of a gateway written while offline.
    return undefined;
  }
  for (const { address } of addresses) {
    const refusal = addressRefusal(address, policy, host);
    if (refusal) return refusal;
  }
  return undefined;
}

/**
 * Checks a URL gw is about to store or call: http(s) only (or `protocols`), no metadata host, and every address
 * its host resolves to allowed by the policy (a name that does not resolve yet passes: the connect-time check
 * decides). Throws OutboundAddressError (400 invalid_request naming `field`).
 */
export async function checkOutboundUrl(
  url: string,
  policy: OutboundPolicy,
  options: { field?: string; resolve?: HostResolver; protocols?: readonly string[] } = {},
): Promise<URL> {
  const field = options.field;
  const prefix = field ? `${field}: ` : '';
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new OutboundAddressError(`${prefix}is not a valid URL`, field);
  }
  const protocols = options.protocols ?? ['http:', 'https:'];
  if (!protocols.includes(parsed.protocol)) {
    throw new OutboundAddressError(
      `${prefix}must be an ${protocols.map((p) => `${p}//`).join(' or ')} URL`,
      field,
    );
  }
  const refusal = await hostRefusal(parsed.hostname, policy, options.resolve ?? systemResolver);
  if (refusal) throw new OutboundAddressError(`${prefix}${refusal}; gw does not call it`, field);
  return parsed;
}

/** Refusal of a literal address at connect time (names go through `guardedLookup`), or undefined. */
export function literalRefusal(host: string, policy: OutboundPolicy): OutboundAddressError | undefined {
  const refusal =
    nameRefusal(host) ?? (classifyAddress(host) !== undefined ? addressRefusal(host, policy) : undefined);
  return refusal ? new OutboundAddressError(`${refusal}; gw does not call it`) : undefined;
}

type LookupCallback = (error: Error | null, address: string | LookupAddress[], family?: number) => void;

/**
 * A `lookup` for `net.connect`/`tls.connect` (and undici's `connect` options) that refuses a name when any of
 * its addresses is refused: the connect-time half of the policy, so DNS rebinding gains nothing.
 */
export function guardedLookup(policy: OutboundPolicy, resolve: HostResolver = systemResolver) {
  return (hostname: string, options: LookupOptions | LookupAllOptions, callback: LookupCallback): void => {
    const refusal = nameRefusal(hostname);
    if (refusal) {
      callback(new OutboundAddressError(`${refusal}; gw does not call it`), '');
      return;
    }
    resolve(hostname).then(
      (all) => {
        const family = options.family === 'IPv4' ? 4 : options.family === 'IPv6' ? 6 : options.family;
        const addresses = family ? all.filter((address) => address.family === family) : all;
        for (const { address } of all) {
          const refused = addressRefusal(address, policy, hostname);
          if (refused) {
            callback(new OutboundAddressError(`${refused}; gw does not call it`), '');
            return;
          }
        }
        const first = addresses[0];
        if (!first) {
          const error: NodeJS.ErrnoException = new Error(`${hostname} has no address`);
          error.code = 'ENOTFOUND';
          callback(error, '');
          return;
        }
        if (options.all) callback(null, addresses);
        else callback(null, first.address, first.family);
      },
      (error: NodeJS.ErrnoException) => callback(error, ''),
    );
  };
}
