import { describe, expect, it } from 'vitest';
import { ScimError } from './scim-errors.ts';
import { applyPatch, parsePatch } from './scim-patch.ts';
import type { ScimResource } from './scim-resource.ts';
import { GROUP, type ResourceType, SCHEMA, USER } from './scim-schema.ts';

const ENTERPRISE = 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User';

const user = (): ScimResource => ({
  schemas: [SCHEMA.user],
  id: 'usr_1',
  userName: 'alice@example.com',
  displayName: 'Alice',
  name: { givenName: 'Alice', familyName: 'Liddell' },
  active: true,
  emails: [{ value: 'alice@example.com', type: 'work', primary: true }],
  groups: [{ value: 'grp_1', display: 'gw-admins' }],
  meta: { resourceType: 'User', version: 'W/"1"' },
});
const group = (): ScimResource => ({
  schemas: [SCHEMA.group],
  id: 'grp_1',
  displayName: 'gw-admins',
  members: [
    { value: 'usr_1', display: 'Alice' },
    { value: 'usr_2', display: 'Bob' },
  ],
  meta: { resourceType: 'Group', version: 'W/"1"' },
});

const patch = (resource: ScimResource, type: ResourceType, ...Operations: unknown[]) =>
  applyPatch(resource, parsePatch({ schemas: [SCHEMA.patchOp], Operations }, type), type);

function refusal(run: () => unknown): ScimError {
  try {
    run();
  } catch (error) {
    if (error instanceof ScimError) return error;
    throw error;
  }
  throw new Error('no error');
}

describe('SCIM PATCH', () => {
  it('applies Entra\'s forms: Replace with a path, the string "False", a work email by value path', () => {
    const patched = patch(
      user(),
      USER,
      { op: 'Replace', path: 'active', value: 'False' },
      { op: 'Replace', path: 'emails[type eq "work"].value', value: 'alice@new.example' },
      { op: 'Replace', path: 'name.familyName', value: 'Kingsleigh' },
      { op: 'Add', path: `${ENTERPRISE}:department`, value: 'Research' },
      { op: 'Add', path: 'externalId', value: 'e-1' },
    );
    expect(patched).toMatchObject({
      active: false,
      emails: [{ value: 'alice@new.example', type: 'work', primary: true }],
      name: { givenName: 'Alice', familyName: 'Kingsleigh' },
      [ENTERPRISE]: { department: 'Research' },
      externalId: 'e-1',
    });
  });

  it("applies Okta's forms: replace without a path, value holding attributes (and the resource's own id)", () => {
    expect(patch(user(), USER, { op: 'replace', value: { active: false } })['active']).toBe(false);
    const renamed = patch(group(), GROUP, {
      op: 'replace',
      value: { id: 'grp_1', displayName: 'gw-operators' },
    });
    expect(renamed['displayName']).toBe('gw-operators');
    // Paths as keys, an extension's attributes under its URN.
    const both = patch(user(), USER, {
      op: 'replace',
      value: { 'name.givenName': 'Al', [ENTERPRISE]: { employeeNumber: 42 }, title: 'Dr' },
    });
    expect(both).toMatchObject({
      name: { givenName: 'Al', familyName: 'Liddell' },
      [ENTERPRISE]: { employeeNumber: '42' },
      title: 'Dr',
    });
  });

  it('adds members in bulk without duplicates, and removes them by value path or by value list', () => {
    const added = patch(group(), GROUP, {
      op: 'add',
      path: 'members',
      value: [{ value: 'usr_3', display: 'Carol' }, { value: 'usr_1' }, { value: 'usr_4' }],
    });
    expect((added['members'] as Array<{ value: string }>).map((member) => member.value)).toEqual([
      'usr_1',
      'usr_2',
      'usr_3',
      'usr_4',
    ]);
    const okta = patch(added, GROUP, { op: 'remove', path: 'members[value eq "usr_2"]' });
    expect((okta['members'] as Array<{ value: string }>).map((member) => member.value)).toEqual([
      'usr_1',
      'usr_3',
      'usr_4',
    ]);
    // Entra: Remove with path "members" and the members to remove as value.
    const entra = patch(okta, GROUP, {
      op: 'Remove',
      path: 'members',
      value: [{ value: 'usr_3' }, { value: 'usr_4' }],
    });
    expect((entra['members'] as Array<{ value: string }>).map((member) => member.value)).toEqual(['usr_1']);
    // Removing someone who is not there changes nothing; remove without a value empties the list.
    expect(patch(entra, GROUP, { op: 'remove', path: 'members[value eq "usr_9"]' })['members']).toHaveLength(
      1,
    );
    expect(patch(entra, GROUP, { op: 'remove', path: 'members' })['members']).toBeUndefined();
    // replace sets the whole list.
    const replaced = patch(group(), GROUP, { op: 'replace', path: 'members', value: [{ value: 'usr_5' }] });
    expect(replaced['members']).toEqual([{ value: 'usr_5' }]);
  });

  it('adds a work email when none matches, and keeps one primary', () => {
    const none = { ...user(), emails: undefined };
    const added = patch(none, USER, {
      op: 'add',
      path: 'emails[type eq "work"].value',
      value: 'a@b.example',
    });
    expect(added['emails']).toEqual([{ type: 'work', value: 'a@b.example' }]);
    const primary = patch(user(), USER, {
      op: 'add',
      path: 'emails',
      value: [{ value: 'alice@home.example', type: 'home', primary: 'True' }],
    });
    expect(primary['emails']).toEqual([
      { value: 'alice@example.com', type: 'work', primary: false },
      { value: 'alice@home.example', type: 'home', primary: true },
    ]);
  });

  it('removes attributes and sub-attributes, and ignores attributes the schema does not have', () => {
    const removed = patch(
      user(),
      USER,
      { op: 'remove', path: 'name.givenName' },
      { op: 'remove', path: 'displayName' },
    );
    expect(removed['name']).toEqual({ familyName: 'Liddell' });
    expect(removed['displayName']).toBeUndefined();
    const ignored = patch(
      user(),
      USER,
      { op: 'add', path: 'favouriteColour', value: 'blue' },
      { op: 'add', value: { shoeSize: 9 } },
    );
    expect(ignored).toEqual(user());
    // A password is never kept.
    expect(
      patch(user(), USER, { op: 'replace', path: 'password', value: 'secret' })['password'],
    ).toBeUndefined();
  });

  it('leaves the input as it was', () => {
    const input = group();
    patch(input, GROUP, { op: 'remove', path: 'members' });
    expect(input).toEqual(group());
  });

  it('refuses bad requests with 400 and the scimType that names the problem', () => {
    const cases: Array<[ResourceType, unknown, string, string]> = [
      [USER, { Operations: [{ op: 'add', value: {} }] }, 'invalidSyntax', 'schemas'],
      [USER, { schemas: [SCHEMA.patchOp] }, 'invalidSyntax', 'Operations'],
      [USER, { schemas: [SCHEMA.patchOp], Operations: [] }, 'invalidSyntax', 'non-empty'],
      [USER, { schemas: [SCHEMA.patchOp], Operations: ['add'] }, 'invalidSyntax', 'must be an object'],
      [
        USER,
        { schemas: [SCHEMA.patchOp], Operations: [{ op: 'move', path: 'title' }] },
        'invalidSyntax',
        "'move' is not add",
      ],
      [
        USER,
        { schemas: [SCHEMA.patchOp], Operations: [{ op: 'remove' }] },
        'noTarget',
        'remove needs a path',
      ],
      [
        USER,
        { schemas: [SCHEMA.patchOp], Operations: [{ op: 'add', path: 'title' }] },
        'invalidValue',
        'is required',
      ],
      [
        USER,
        { schemas: [SCHEMA.patchOp], Operations: [{ op: 'replace', value: 'x' }] },
        'invalidValue',
        'must be an object',
      ],
      [
        USER,
        { schemas: [SCHEMA.patchOp], Operations: [{ op: 'add', path: 'emails[type eq "work"', value: 'x' }] },
        'invalidPath',
        "Operations[0].path: expected ']'",
      ],
      [
        USER,
        { schemas: [SCHEMA.patchOp], Operations: [{ op: 'add', path: 5, value: 'x' }] },
        'invalidPath',
        'must be a string',
      ],
      [
        GROUP,
        {
          schemas: [SCHEMA.patchOp],
          Operations: [{ op: 'add', path: 'members[value eq "x" or', value: 'x' }],
        },
        'invalidPath',
        'expected an attribute name',
      ],
    ];
    for (const [type, body, scimType, message] of cases) {
      const error = refusal(() => parsePatch(body as Record<string, unknown>, type));
      expect({ body, status: error.status, scimType: error.scimType }).toEqual({
        body,
        status: 400,
        scimType,
      });
      expect(error.message).toContain(message);
    }
  });

  it('refuses changes of read-only attributes, wrong types and replacing what no filter matches', () => {
    const cases: Array<[ResourceType, unknown, string, string]> = [
      [USER, { op: 'replace', path: 'id', value: 'usr_other' }, 'mutability', 'id is read-only'],
      [USER, { op: 'add', path: 'groups', value: [{ value: 'grp_2' }] }, 'mutability', 'groups is read-only'],
      [GROUP, { op: 'replace', value: { id: 'grp_other' } }, 'mutability', 'id is read-only'],
      [
        USER,
        { op: 'replace', path: 'active', value: 'maybe' },
        'invalidValue',
        'active: must be true or false',
      ],
      [
        USER,
        { op: 'replace', path: 'userName', value: { a: 1 } },
        'invalidValue',
        'userName: must be a string',
      ],
      [
        USER,
        { op: 'replace', path: 'emails.value', value: 'x@y.example' },
        'invalidPath',
        'select them with a filter',
      ],
      [
        GROUP,
        { op: 'replace', path: 'members[value eq "usr_9"]', value: { value: 'usr_8' } },
        'noTarget',
        'no value of members matches',
      ],
    ];
    for (const [type, operation, scimType, message] of cases) {
      const error = refusal(() => patch(type === USER ? user() : group(), type, operation));
      expect({ operation, status: error.status, scimType: error.scimType }).toEqual({
        operation,
        status: 400,
        scimType,
      });
      expect(error.message).toContain(message);
      expect(error.message).toMatch(/^Operations\[0\]/);
    }
  });
});
