import type { LookupAddress } from 'node:dns';
import { describe, expect, it } from 'vitest';
import { networkPolicySchema } from '../config/network-policy.ts';
import {
  checkOutboundUrl,
  classifyAddress,
  guardedLookup,
  type HostResolver,
  OutboundAddressError,
  outboundPolicy,
  parseIpv4,
} from './outbound-address.ts';

// No test here touches the network: every name resolves through an injected table.
function resolverOf(table: Record<string, string[]>): HostResolver {
  return async (host) => {
    const addresses = table[host];
    if (!addresses) throw Object.assign(new Error(`${host} not found`), { code: 'ENOTFOUND' });
    return addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };
}

const names = resolverOf({
  'api.example.com': ['93.184.215.14', '2606:2800:21f:cb07:6820:80da:af6b:8b2c'],
  'rebind.example.com': ['93.184.215.14', '169.254.169.254'],
  'internal.example.com': ['10.1.2.3'],
  localhost: ['127.0.0.1', '::1'],
  'mapped.example.com': ['::ffff:169.254.169.254'],
  'llm.corp.example': ['10.9.9.9'],
  'meta-alias.corp.example': ['169.254.169.254'],
});

const defaults = outboundPolicy(networkPolicySchema.parse({}));

async function refusal(url: string, policy = defaults): Promise<string | undefined> {
  try {
    await checkOutboundUrl(url, policy, { resolve: names, field: 'url' });
    return undefined;
  } catch (error) {
    expect(error).toBeInstanceOf(OutboundAddressError);
    return (error as Error).message;
  }
}

describe('parseIpv4', () => {
  it.each([
    ['169.254.169.254', 0xa9fea9fe],
    ['0xa9fea9fe', 0xa9fea9fe],
    ['2852039166', 0xa9fea9fe],
    ['169.254.43518', 0xa9fea9fe],
    ['169.16689662', 0xa9fea9fe],
    ['0251.0376.0251.0376', 0xa9fea9fe],
    ['0xa9.0xfe.0xa9.0xfe', 0xa9fea9fe],
    ['0xA9.254.0251.0xfe', 0xa9fea9fe],
    ['169.254.169.254.', 0xa9fea9fe],
    ['0', 0],
    ['127.1', 0x7f000001],
  ])('reads %s as inet_aton does', (text, value) => {
    expect(parseIpv4(text)).toBe(value);
  });

  it.each([
    '256.0.0.1',
    '1.2.3.4.5',
    '08.0.0.1',
    'example.com',
    '',
    '1..2',
    '4294967296',
    '169.254.169.254.nip.io',
  ])('is no address: %s', (text) => {
    expect(parseIpv4(text)).toBeUndefined();
  });
});

describe('classifyAddress', () => {
  it.each([
    ['169.254.169.254', 'metadata'],
    ['0xa9fea9fe', 'metadata'],
    ['2852039166', 'metadata'],
    ['169.254.43518', 'metadata'],
    ['0251.0376.0251.0376', 'metadata'],
    ['0xa9.0xfe.0xa9.0xfe', 'metadata'],
    ['[::ffff:169.254.169.254]', 'metadata'],
    ['[::ffff:a9fe:a9fe]', 'metadata'],
    ['::ffff:a9fe:a9fe', 'metadata'],
    ['0:0:0:0:0:ffff:a9fe:a9fe', 'metadata'],
    ['::a9fe:a9fe', 'metadata'],
    ['::169.254.169.254', 'metadata'],
    ['::ffff:0:a9fe:a9fe', 'metadata'],
    ['64:ff9b::a9fe:a9fe', 'metadata'],
    ['2002:a9fe:a9fe::1', 'metadata'],
    ['fd00:ec2::254', 'metadata'],
    ['[FD00:EC2:0::254]', 'metadata'],
    ['100.100.100.200', 'metadata'],
    ['169.254.1.1', 'link-local'],
    ['fe80::1', 'link-local'],
    ['fe80::1%eth0', 'link-local'],
    ['febf::1', 'link-local'],
    ['::ffff:169.254.1.1', 'link-local'],
    ['0.0.0.0', 'unspecified'],
    ['0', 'unspecified'],
    ['::', 'unspecified'],
    ['::ffff:0.0.0.0', 'unspecified'],
    ['127.0.0.1', 'loopback'],
    ['127.1', 'loopback'],
    ['0x7f000001', 'loopback'],
    ['2130706433', 'loopback'],
    ['::1', 'loopback'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['10.0.0.1', 'private'],
    ['012.0.0.1', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['100.64.0.1', 'private'],
    ['100.127.255.255', 'private'],
    ['fc00::1', 'private'],
    ['fd12:3456::1', 'private'],
    ['::ffff:10.0.0.1', 'private'],
    ['::ffff:a00:1', 'private'],
    ['224.0.0.1', 'reserved'],
    ['255.255.255.255', 'reserved'],
    ['ff02::1', 'reserved'],
    ['8.8.8.8', 'public'],
    ['172.32.0.1', 'public'],
    ['100.128.0.1', 'public'],
    ['2606:4700::1111', 'public'],
    ['::ffff:8.8.8.8', 'public'],
  ])('%s is %s', (address, kind) => {
    expect(classifyAddress(address)).toBe(kind);
  });

  it('leaves host names alone', () => {
    expect(classifyAddress('metadata.google.internal')).toBeUndefined();
    expect(classifyAddress('169.254.169.254.nip.io')).toBeUndefined();
  });
});

describe('checkOutboundUrl with the default policy', () => {
  it.each([
    'http://169.254.169.254/latest/meta-data/',
    'http://[::ffff:169.254.169.254]/',
    'http://[::ffff:a9fe:a9fe]/',
    'http://0xa9fea9fe/',
    'http://2852039166/',
    'http://169.254.43518/',
    'http://0251.0376.0251.0376/',
    'http://0xa9.0xfe.0xa9.0xfe/',
    'http://169.254.169.254./',
    'http://[fd00:ec2::254]/',
    'http://100.100.100.200/',
    'http://metadata.google.internal/computeMetadata/v1/',
    'http://metadata.google.internal./computeMetadata/v1/',
    'http://METADATA.Google.Internal/',
    'http://metadata/',
    'http://metadata./',
    'http://169.254.10.10/',
    'http://[fe80::1]/',
    'http://0.0.0.0:6379/',
    'http://0/',
    'http://[::]/',
    'http://10.0.0.1/',
    'http://172.16.5.4/',
    'http://192.168.0.10/',
    'http://100.64.1.1/',
    'http://[fc00::1]/',
    'http://[fd00::1]/',
    'http://internal.example.com/',
    'http://internal.example.com./',
    'http://rebind.example.com/',
    'http://mapped.example.com/',
  ])('refuses %s', async (url) => {
    expect(await refusal(url)).toMatch(/^url: /);
  });

  it.each([
    'https://api.example.com/v1',
    'http://api.example.com./v1',
    'http://127.0.0.1:8080/',
    'http://127.1:8080/',
    'http://[::1]:8080/',
    'http://localhost:8080/',
    'http://unknown.example.com/',
  ])('allows %s (public, loopback which is allowed by default, or not resolvable yet)', async (url) => {
    expect(await refusal(url)).toBeUndefined();
  });

  it('refuses other schemes', async () => {
    expect(await refusal('file:///etc/passwd')).toMatch(/http:\/\/ or https:\/\//);
    expect(await refusal('gopher://127.0.0.1:6379/')).toMatch(/http:\/\/ or https:\/\//);
    expect(await refusal('not a url')).toMatch(/not a valid URL/);
  });

  it('names the address a name resolved to, and the config setting that would allow it', async () => {
    expect(await refusal('http://internal.example.com/')).toBe(
      "url: internal.example.com (10.1.2.3) is a private address (allowed only by the config file's network.allow_private_addresses or network.allowed_addresses); gw does not call it",
    );
  });
});

describe('checkOutboundUrl with the config file widening the policy', () => {
  it('allows private ranges with allow_private_addresses, never metadata or link-local', async () => {
    const policy = outboundPolicy(networkPolicySchema.parse({ allow_private_addresses: true }));
    expect(await refusal('http://10.0.0.1/', policy)).toBeUndefined();
    expect(await refusal('http://[fd00::1]/', policy)).toBeUndefined();
    expect(await refusal('http://internal.example.com/', policy)).toBeUndefined();
    expect(await refusal('http://[::ffff:169.254.169.254]/', policy)).toMatch(/metadata/);
    expect(await refusal('http://169.254.1.1/', policy)).toMatch(/link-local/);
    expect(await refusal('http://0.0.0.0/', policy)).toMatch(/unspecified/);
  });

  it('refuses loopback with allow_loopback false', async () => {
    const policy = outboundPolicy(networkPolicySchema.parse({ allow_loopback: false }));
    expect(await refusal('http://127.0.0.1:6379/', policy)).toMatch(/loopback/);
    expect(await refusal('http://[::ffff:7f00:1]:6379/', policy)).toMatch(/loopback/);
    expect(await refusal('http://localhost:6379/', policy)).toMatch(/loopback/);
  });

  it('allows listed ranges and names, and nothing beside them; metadata never', async () => {
    const policy = outboundPolicy(
      networkPolicySchema.parse({
        allowed_addresses: [
          '10.1.0.0/16',
          'fd12::/16',
          '169.254.10.10',
          'llm.corp.example',
          'meta-alias.corp.example',
        ],
      }),
    );
    expect(await refusal('http://10.1.200.3/', policy)).toBeUndefined();
    expect(await refusal('http://[::ffff:10.1.0.1]/', policy)).toBeUndefined();
    expect(await refusal('http://10.2.0.1/', policy)).toMatch(/private/);
    expect(await refusal('http://[fd12:1::1]/', policy)).toBeUndefined();
    expect(await refusal('http://[fd13::1]/', policy)).toMatch(/private/);
    expect(await refusal('http://169.254.10.10/', policy)).toBeUndefined();
    expect(await refusal('http://169.254.10.11/', policy)).toMatch(/link-local/);
    expect(await refusal('http://llm.corp.example./', policy)).toBeUndefined();
    // internal.example.com resolves into 10.1.0.0/16
    expect(await refusal('http://internal.example.com/', policy)).toBeUndefined();
    expect(await refusal('http://meta-alias.corp.example/', policy)).toMatch(/metadata/);
  });

  it('refuses an allow-list entry that is neither address, range nor name', () => {
    expect(networkPolicySchema.safeParse({ allowed_addresses: ['10.0.0.0/33'] }).success).toBe(false);
    expect(networkPolicySchema.safeParse({ allowed_addresses: ['http://x/'] }).success).toBe(false);
  });
});

describe('guardedLookup (connect time)', () => {
  function lookup(host: string, all: boolean, policy = defaults) {
    return new Promise<{ error: Error | null; address: string | LookupAddress[] }>((resolve) => {
      guardedLookup(policy, names)(host, { all }, (error, address) => resolve({ error, address }));
    });
  }

  it('hands the addresses of an allowed name over', async () => {
    expect((await lookup('api.example.com', true)).address).toHaveLength(2);
    expect(await lookup('localhost', false)).toEqual({ error: null, address: '127.0.0.1' });
  });

  it('refuses a name one of whose addresses is refused (DNS rebinding)', async () => {
    for (const host of [
      'rebind.example.com',
      'internal.example.com',
      'mapped.example.com',
      'metadata.google.internal',
    ]) {
      const { error } = await lookup(host, true);
      expect(error).toBeInstanceOf(OutboundAddressError);
      expect((error as OutboundAddressError).code).toBe('outbound_address_refused');
    }
  });
});
