import { describe, expect, it } from 'vitest';
import { authenticate } from './admin-principal.ts';
import { heldPermissions, mayReferenceSecrets } from './permissions.ts';

describe('secrets:reference is Admin’s alone', () => {
  it('is not held through a stored custom role that names it', () => {
    const custom = heldPermissions({ id: 'sneaky', permissions: ['secrets:reference', 'guardrails:write'] });
    expect([...custom]).toEqual(['guardrails:write']);
    expect(
      heldPermissions({ id: 'admin', permissions: ['secrets:reference'] }).has('secrets:reference'),
    ).toBe(true);
  });

  it('is held by the bootstrap token, never by anonymous callers of an opened API', async () => {
    const auth = { adminToken: 'bootstrap-token-0123', allowAnonymous: true };
    const options = { auth, identities: undefined };
    const bootstrap = await authenticate({ authorization: 'Bearer bootstrap-token-0123' }, options, {
      method: 'POST',
    });
    expect(mayReferenceSecrets({ role: bootstrap.role, principal: bootstrap })).toBe(true);
    const anonymous = await authenticate({}, options, { method: 'POST' });
    expect(anonymous.permissions.has('guardrails:write')).toBe(true);
    expect(mayReferenceSecrets({ role: anonymous.role, principal: anonymous })).toBe(false);
  });
});
