import { type AuthConfig, authConfigSchema, silentLogger } from '@gw/shared';
import { MemoryStore } from '@gw/shared/store';
import { describe, expect, it } from 'vitest';
import { IdentityStore } from '../access/identity-store.ts';
import { LoginRefused, signInUser, wantedClaims } from './sso-identity.ts';

const auth = (input: Record<string, unknown> = {}): AuthConfig =>
  authConfigSchema.parse({
    role_mappings: [
      { value: 'gw-viewers', role: 'viewer' },
      { value: 'gw-admins', role: 'admin' },
      { value: 'eng', role: 'developer', team_ids: ['team-a'] },
      { claim: 'org.department', value: 'finance', role: 'viewer', team_ids: ['team-f'] },
    ],
    ...input,
  });

async function identities() {
  return new IdentityStore({ store: await MemoryStore.open(), logger: silentLogger() });
}

const refusal = async (promise: Promise<unknown>) => {
  const error = await promise.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(LoginRefused);
  return error as LoginRefused;
};

describe('signInUser', () => {
  it('creates the user of the email with the mapped roles; the highest privilege is the one acted with', async () => {
    const store = await identities();
    const { user, role } = await signInUser({
      claims: {
        sub: 's1',
        email: 'Ann@Example.com',
        name: 'Ann',
        groups: ['gw-viewers', 'gw-admins', 'eng'],
      },
      auth: auth(),
      identities: store,
    });
    expect(role.id).toBe('admin');
    expect(user).toMatchObject({
      email: 'ann@example.com',
      name: 'Ann',
      roles: ['viewer', 'admin', 'developer'],
      team_ids: ['team-a'],
      active: true,
    });
    expect(user.id).toMatch(/^usr_[0-9a-f]{12}$/);
    expect(await store.getUser(user.id)).toEqual(user);
  });

  it('updates an existing user of that email (made through /api/users), keeping id and creation time', async () => {
    const store = await identities();
    await store.putUser({
      id: 'usr_manual',
      email: 'ann@example.com',
      name: 'Ann B',
      roles: ['admin'],
      team_ids: [],
      active: true,
      created_at: '2026-01-01T00:00:00.000Z',
      updated_at: '2026-01-01T00:00:00.000Z',
    });
    const { user, role } = await signInUser({
      claims: { sub: 's1', email: 'ann@example.com', org: { department: 'finance' } },
      auth: auth(),
      identities: store,
      now: Date.parse('2026-02-01T00:00:00.000Z'),
    });
    expect(role.id).toBe('viewer');
    expect(user).toMatchObject({
      id: 'usr_manual',
      name: 'Ann B',
      roles: ['viewer'],
      team_ids: ['team-f'],
      created_at: '2026-01-01T00:00:00.000Z',
      updated_at: '2026-02-01T00:00:00.000Z',
    });
    expect((await store.listUsers()).length).toBe(1);
  });

  it('gives auth.default_role (and no teams) when no rule matches', async () => {
    const { user, role } = await signInUser({
      claims: { sub: 's2', email: 'bo@example.com', groups: ['contractors'] },
      auth: auth({ default_role: 'viewer' }),
      identities: await identities(),
    });
    expect(role.id).toBe('viewer');
    expect(user.roles).toEqual(['viewer']);
    expect(user.team_ids).toEqual([]);
  });

  it('refuses when no rule matches and no default role is set, naming the claims checked but not their values', async () => {
    const store = await identities();
    const error = await refusal(
      signInUser({
        claims: { sub: 's2', email: 'bo@example.com', groups: ['contractors-secret-group'] },
        auth: auth(),
        identities: store,
      }),
    );
    expect(error.who).toBe('oidc:bo@example.com');
    expect(error.message).toBe(
      "no role mapping matched the identity's claims (checked: groups, org.department) and auth.default_role is not set",
    );
    expect(error.toGatewayError()).toMatchObject({ status: 403, type: 'forbidden', code: 'login_refused' });
    expect(await store.listUsers()).toEqual([]);
  });

  it('refuses an identity without an email, with an unverified one, or of a deactivated user', async () => {
    const store = await identities();
    const noEmail = await refusal(
      signInUser({ claims: { sub: 's3', groups: ['gw-admins'] }, auth: auth(), identities: store }),
    );
    expect(noEmail.who).toBe('oidc:s3');
    expect(noEmail.message).toContain('no email claim');
    const unverified = await refusal(
      signInUser({
        claims: { sub: 's3', email: 'c@example.com', email_verified: false, groups: ['gw-admins'] },
        auth: auth(),
        identities: store,
      }),
    );
    expect(unverified.message).toContain('not verified');
    const { user } = await signInUser({
      claims: { sub: 's3', email: 'c@example.com', groups: ['gw-admins'] },
      auth: auth(),
      identities: store,
    });
    await store.putUser({ ...user, active: false });
    const deactivated = await refusal(
      signInUser({
        claims: { sub: 's3', email: 'c@example.com', groups: ['gw-admins'] },
        auth: auth(),
        identities: store,
      }),
    );
    expect(deactivated.message).toBe(`the admin user ${user.id} (c@example.com) is deactivated`);
    expect((await store.getUser(user.id))?.active).toBe(false);
  });

  it('refuses when the mapped roles do not exist, and keeps only those that do', async () => {
    const store = await identities();
    const config = auth({
      role_mappings: [
        { value: 'a', role: 'auditor' },
        { value: 'b', role: 'viewer' },
      ],
    });
    const missing = await refusal(
      signInUser({ claims: { email: 'd@example.com', groups: ['a'] }, auth: config, identities: store }),
    );
    expect(missing.message).toContain('(auditor) do not exist');
    const { user } = await signInUser({
      claims: { email: 'd@example.com', groups: ['a', 'b'] },
      auth: config,
      identities: store,
    });
    expect(user.roles).toEqual(['viewer']);
  });
});

describe('wantedClaims', () => {
  it('is email and the first step of every rule’s claim, once each', () => {
    expect(wantedClaims(auth().role_mappings)).toEqual(['email', 'groups', 'org']);
  });
});
