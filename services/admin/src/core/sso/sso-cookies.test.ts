import { describe, expect, it } from 'vitest';
import { readCookie, serializeCookie } from './sso-cookies.ts';

describe('readCookie', () => {
  it('finds a cookie among others, the first of a repeated name, and unquotes a quoted value', () => {
    const headers = { cookie: '_session=abc; gw_session=first; other=1; gw_session=second' };
    expect(readCookie(headers, 'gw_session')).toBe('first');
    expect(readCookie(headers, '_session')).toBe('abc');
    expect(readCookie({ cookie: 'gw_session="quoted"' }, 'gw_session')).toBe('quoted');
  });

  it('answers undefined without the header, without the cookie, or for a name that only ends the same', () => {
    expect(readCookie({}, 'gw_session')).toBeUndefined();
    expect(readCookie({ cookie: 'x_gw_session=1; flag' }, 'gw_session')).toBeUndefined();
  });
});

describe('serializeCookie', () => {
  it('is HttpOnly and SameSite=Lax, Secure only when asked', () => {
    expect(serializeCookie('gw_session', 'v', { path: '/', maxAgeSeconds: 60, secure: false })).toBe(
      'gw_session=v; Path=/; Max-Age=60; HttpOnly; SameSite=Lax',
    );
    expect(serializeCookie('gw_session', '', { path: '/', maxAgeSeconds: 0, secure: true })).toBe(
      'gw_session=; Path=/; Max-Age=0; HttpOnly; SameSite=Lax; Secure',
    );
  });
});
