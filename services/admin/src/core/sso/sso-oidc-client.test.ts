import { ConfigError, outboundPolicy } from '@gw/shared';
import { describe, expect, it } from 'vitest';
import { checkIssuer } from './sso-oidc-client.ts';

describe('checkIssuer', () => {
  it('accepts https anywhere and http on a loopback address only', () => {
    for (const issuer of [
      'https://login.example.com/realms/gw',
      'http://127.0.0.1:4000',
      'http://localhost:4000/oidc',
      'http://[::1]:4000',
    ])
      expect(checkIssuer(issuer, outboundPolicy()).href).toBe(new URL(issuer).href);
  });

  it('refuses http elsewhere, and other schemes, with a config error naming the field', () => {
    for (const issuer of [
      'http://login.example.com',
      'http://10.0.0.5',
      'http://idp.localhost',
      'ftp://127.0.0.1',
    ]) {
      expect(() => checkIssuer(issuer, outboundPolicy())).toThrow(ConfigError);
      expect(() => checkIssuer(issuer, outboundPolicy())).toThrow(
        /^auth\.oidc\.issuer: .* must be an https URL/,
      );
    }
  });
});

describe('checkIssuer and the outbound address policy', () => {
  it('refuses a metadata, link-local or private issuer even over https', () => {
    for (const issuer of [
      'https://169.254.169.254/',
      'https://[::ffff:a9fe:a9fe]/',
      'https://0xa9fea9fe/',
      'https://metadata.google.internal./',
      'https://10.0.0.5/',
    ])
      expect(() => checkIssuer(issuer, outboundPolicy())).toThrow(
        /^auth\.oidc\.issuer: .*; gw does not call it$/,
      );
  });

  it('allows a private issuer the config file allows', () => {
    const policy = outboundPolicy({ allowed_addresses: ['10.0.0.0/24'] });
    expect(checkIssuer('https://10.0.0.5/', policy).hostname).toBe('10.0.0.5');
  });
});
