import { MemoryStore } from '@gw/shared/store';
import { describe, expect, it } from 'vitest';
import { LOGIN_TTL_SECONDS, SsoStore } from './sso-store.ts';

const login = { nonce: 'n', code_verifier: 'v', return_to: '/ui/' };

describe('SsoStore', () => {
  it('gives a sign-in under way once, and never past its expiry', async () => {
    const sso = new SsoStore(await MemoryStore.open());
    const now = Date.now();
    await sso.putLogin('state-1', login, now);
    expect(await sso.takeLogin('state-1', now)).toMatchObject(login);
    expect(await sso.takeLogin('state-1', now)).toBeUndefined();

    await sso.putLogin('state-2', login, now);
    expect(await sso.takeLogin('state-2', now + LOGIN_TTL_SECONDS * 1000)).toBeUndefined();
    expect(await sso.takeLogin('unknown', now)).toBeUndefined();
  });

  it('keeps sessions and states under the SHA-256 of their secret, never the secret itself', async () => {
    const store = await MemoryStore.open();
    const sso = new SsoStore(store);
    await sso.putLogin('the-state', login);
    const { id, session } = await sso.createSession('usr_1', 60);
    expect(id).toMatch(/^[\w-]{43}$/);
    expect(session.csrf_token).toMatch(/^[\w-]{43}$/);
    const stored = JSON.stringify([
      await store.list('admin-sso-sessions'),
      await store.list('admin-sso-logins'),
    ]);
    expect(stored).not.toContain(id);
    expect(stored).not.toContain('the-state');
    expect(stored).toContain(session.csrf_token);
  });

  it('finds a session until it expires, then says expired once and forgets it', async () => {
    const sso = new SsoStore(await MemoryStore.open());
    const now = Date.now();
    const { id } = await sso.createSession('usr_1', 60, now);
    expect(await sso.findSession(id, now + 59_000)).toMatchObject({ user_id: 'usr_1' });
    expect(await sso.findSession(id, now + 60_000)).toBe('expired');
    expect(await sso.findSession(id, now)).toBeUndefined();
    expect(await sso.findSession('forged', now)).toBeUndefined();
  });

  it('ends a session at once, and sweeps what expired', async () => {
    const store = await MemoryStore.open();
    const sso = new SsoStore(store);
    const now = Date.now();
    const ended = await sso.createSession('usr_1', 60, now);
    expect(await sso.deleteSession(ended.id)).toBe(true);
    expect(await sso.findSession(ended.id, now)).toBeUndefined();

    const kept = await sso.createSession('usr_2', 3_600, now);
    await sso.createSession('usr_3', 60, now);
    await sso.putLogin('old', login, now - LOGIN_TTL_SECONDS * 1000);
    await sso.putLogin('new', login, now);
    expect(await sso.sweep(now + 61_000)).toBe(2);
    expect(await store.list('admin-sso-sessions')).toHaveLength(1);
    expect(await sso.findSession(kept.id, now + 61_000)).toMatchObject({ user_id: 'usr_2' });
    expect(await sso.takeLogin('new', now)).toMatchObject(login);
  });
});
