import type { RoleMapping } from '@gw/shared';
import { describe, expect, it } from 'vitest';
import { BUILT_IN_ROLES, builtInRole, type RoleDefinition } from './permissions.ts';
import { highestRole, mapIdentity } from './role-mapping.ts';

const rule = (value: string, role: string, extra: Partial<RoleMapping> = {}): RoleMapping => ({
  claim: 'groups',
  value,
  role,
  team_ids: [],
  ...extra,
});

describe('mapIdentity', () => {
  it('gives every matching rule’s role once and the union of their teams', () => {
    const rules = [
      rule('eng', 'developer', { team_ids: ['team-a'] }),
      rule('ops', 'viewer'),
      rule('eng-b', 'developer', { team_ids: ['team-b', 'team-a'] }),
      rule('root', 'admin'),
    ];
    expect(mapIdentity({ groups: ['eng', 'eng-b', 'ops'] }, rules)).toEqual({
      roles: ['developer', 'viewer'],
      teamIds: ['team-a', 'team-b'],
    });
    expect(mapIdentity({ groups: [] }, rules)).toEqual({ roles: [], teamIds: [] });
    expect(mapIdentity({}, rules)).toEqual({ roles: [], teamIds: [] });
  });

  it('reads a scalar claim and a nested one by its dotted path', () => {
    const rules = [
      rule('finance', 'viewer', { claim: 'department' }),
      rule('gw-admin', 'admin', { claim: 'realm_access.roles' }),
    ];
    expect(mapIdentity({ department: 'finance' }, rules).roles).toEqual(['viewer']);
    expect(mapIdentity({ realm_access: { roles: ['gw-admin'] } }, rules).roles).toEqual(['admin']);
    expect(mapIdentity({ realm_access: 'gw-admin' }, rules).roles).toEqual([]);
  });
});

describe('highestRole', () => {
  const role = (id: string, permissions: string[], teamScoped = false): RoleDefinition =>
    ({
      id,
      name: id,
      description: '',
      permissions,
      team_scoped: teamScoped,
      built_in: false,
    }) as RoleDefinition;

  it('ranks Admin over Developer over Viewer, whatever the order', () => {
    const [admin, developer, viewer] = ['admin', 'developer', 'viewer'].map((id) => builtInRole(id)!);
    expect(highestRole([viewer!, developer!])?.id).toBe('developer');
    expect(highestRole([developer!, admin!, viewer!])?.id).toBe('admin');
    expect(highestRole([...BUILT_IN_ROLES].reverse())?.id).toBe('admin');
    expect(highestRole([])).toBeUndefined();
  });

  it('ranks custom roles by what they may change, then by scope, then by what they read', () => {
    const keys = role('keys-everywhere', ['keys:read', 'keys:write']);
    const scopedKeys = role('keys-of-teams', ['keys:read', 'keys:write'], true);
    const reader = role('reader', ['keys:read', 'logs:read', 'teams:read']);
    expect(highestRole([reader, scopedKeys, keys])?.id).toBe('keys-everywhere');
    expect(highestRole([reader, scopedKeys])?.id).toBe('keys-of-teams');
    expect(highestRole([role('a', ['logs:read']), role('b', ['logs:read'])])?.id).toBe('a');
  });
});
