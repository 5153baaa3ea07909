import { silentLogger } from '@gw/shared';
import { MemoryStore } from '@gw/shared/store';
import { describe, expect, it } from 'vitest';
import { IdentityStore } from '../access/identity-store.ts';
import { createSessionAuthenticator } from './sso-sessions.ts';
import { SsoStore } from './sso-store.ts';

async function setUp(roles = ['developer']) {
  const store = await MemoryStore.open();
  const identities = new IdentityStore({ store, logger: silentLogger() });
  const sessions = new SsoStore(store);
  await identities.putUser({
    id: 'usr_1',
    email: 'a@example.com',
    name: 'A',
    roles,
    team_ids: ['team-a'],
    active: true,
    created_at: '2026-01-01T00:00:00.000Z',
    updated_at: '2026-01-01T00:00:00.000Z',
  });
  const { id, session } = await sessions.createSession('usr_1', 60);
  const authenticator = createSessionAuthenticator({ sessions, identities });
  const cookie = `gw_session=${id}`;
  return { identities, sessions, authenticator, cookie, id, csrf: session.csrf_token };
}

const failure = async (promise: Promise<unknown>) =>
  promise.then(
    () => {
      throw new Error('expected a refusal');
    },
    (error: { status: number; code: string; message: string }) => error,
  );

describe('createSessionAuthenticator', () => {
  it('authenticates the cookie as the session’s user with the highest of their current roles', async () => {
    const { authenticator, cookie, identities } = await setUp(['viewer', 'developer']);
    const principal = await authenticator.principal({ cookie }, { method: 'GET' });
    expect(principal).toMatchObject({
      kind: 'session',
      roleId: 'developer',
      role: 'member',
      teamScoped: true,
      teamIds: ['team-a'],
      userId: 'usr_1',
      label: 'session:usr_1',
    });
    // A change of the user's roles applies at the next request.
    const user = (await identities.getUser('usr_1'))!;
    await identities.putUser({ ...user, roles: ['admin'] });
    expect(await authenticator.principal({ cookie }, { method: 'GET' })).toMatchObject({
      roleId: 'admin',
      role: 'admin',
      teamScoped: false,
    });
  });

  it('leaves a request without the cookie, or with an Authorization header, to the bearer tokens', async () => {
    const { authenticator, cookie } = await setUp();
    expect(await authenticator.principal({}, { method: 'GET' })).toBeUndefined();
    expect(
      await authenticator.principal({ cookie, authorization: 'Bearer x' }, { method: 'POST' }),
    ).toBeUndefined();
    expect(
      await authenticator.principal(
        { cookie: 'gw_session=forged', authorization: 'Bearer x' },
        { method: 'GET' },
      ),
    ).toBeUndefined();
  });

  it('needs x-csrf-token equal to the session’s token for a change, not for a read', async () => {
    const { authenticator, cookie, csrf } = await setUp();
    for (const method of ['GET', 'HEAD', 'OPTIONS'])
      expect(await authenticator.principal({ cookie }, { method })).toBeDefined();
    const missing = await failure(authenticator.principal({ cookie }, { method: 'DELETE' }));
    expect(missing).toMatchObject({ status: 403, code: 'csrf_token' });
    expect(missing.message).toContain('needs the header x-csrf-token');
    const wrong = await failure(
      authenticator.principal({ cookie, 'x-csrf-token': 'no' }, { method: 'PATCH' }),
    );
    expect(wrong.message).toContain('the one sent is not it');
    expect(await authenticator.principal({ cookie, 'x-csrf-token': csrf }, { method: 'POST' })).toMatchObject(
      {
        kind: 'session',
      },
    );
  });

  it('refuses (401) an unknown, ended or expired session, and a deleted, deactivated or role-less user', async () => {
    const { authenticator, cookie, id, sessions, identities } = await setUp();
    expect(
      await failure(authenticator.principal({ cookie: 'gw_session=forged' }, { method: 'GET' })),
    ).toMatchObject({
      status: 401,
      code: 'session_invalid',
    });
    const user = (await identities.getUser('usr_1'))!;
    await identities.putUser({ ...user, roles: ['gone'] });
    expect((await failure(authenticator.principal({ cookie }, { method: 'GET' }))).message).toContain(
      'holds no role that exists',
    );
    await identities.putUser({ ...user, active: false });
    expect((await failure(authenticator.principal({ cookie }, { method: 'GET' }))).message).toContain(
      'deactivated',
    );
    await identities.deleteUser('usr_1');
    expect((await failure(authenticator.principal({ cookie }, { method: 'GET' }))).status).toBe(401);
    await sessions.deleteSession(id);
    expect((await failure(authenticator.principal({ cookie }, { method: 'GET' }))).message).toContain(
      'unknown or ended',
    );

    const other = await setUp();
    const brief = await other.sessions.createSession('usr_1', 60, Date.now() - 61_000);
    expect(
      (await failure(other.authenticator.principal({ cookie: `gw_session=${brief.id}` }, { method: 'GET' })))
        .message,
    ).toContain('expired');
  });
});
