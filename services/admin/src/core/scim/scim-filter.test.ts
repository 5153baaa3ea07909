import { describe, expect, it } from 'vitest';
import { ScimError } from './scim-errors.ts';
import { matches, parseFilter, parsePath } from './scim-filter.ts';
import { GROUP, USER } from './scim-schema.ts';

const alice = {
  schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'],
  id: 'usr_1',
  externalId: 'Ext-ALICE',
  userName: 'Alice@Example.com',
  displayName: 'Alice Liddell',
  name: { givenName: 'Alice', familyName: 'Liddell' },
  active: true,
  emails: [
    { value: 'alice@example.com', type: 'work', primary: true },
    { value: 'alice@home.example', type: 'home' },
  ],
  'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User': { department: 'Research' },
  meta: {
    resourceType: 'User',
    created: '2024-03-01T10:00:00.000Z',
    lastModified: '2024-03-02T10:00:00.000Z',
  },
};
const bob = {
  id: 'usr_2',
  userName: 'bob@example.org',
  displayName: 'Bob',
  active: false,
  meta: { resourceType: 'User', created: '2023-01-01T00:00:00.000Z' },
};
const admins = {
  id: 'grp_1',
  displayName: 'gw-admins',
  members: [{ value: 'usr_1', display: 'Alice' }],
  meta: { resourceType: 'Group', created: '2024-01-01T00:00:00.000Z' },
};

const which = (filter: string) =>
  [alice, bob].filter((user) => matches(parseFilter(filter, USER), user)).map((user) => user.id);

function refusal(run: () => unknown): ScimError {
  try {
    run();
  } catch (error) {
    if (error instanceof ScimError) return error;
    throw error;
  }
  throw new Error('no error');
}

describe('SCIM filters', () => {
  it('compares with every operator, case-insensitively where the schema says so', () => {
    expect(which('userName eq "alice@example.com"')).toEqual(['usr_1']);
    expect(which('userName ne "alice@example.com"')).toEqual(['usr_2']);
    expect(which('displayName co "lid"')).toEqual(['usr_1']);
    expect(which('userName sw "BOB"')).toEqual(['usr_2']);
    expect(which('userName ew ".org"')).toEqual(['usr_2']);
    expect(which('meta.created gt "2023-06-01T00:00:00Z"')).toEqual(['usr_1']);
    expect(which('meta.created ge "2023-01-01T00:00:00Z"')).toEqual(['usr_1', 'usr_2']);
    expect(which('meta.created lt "2023-06-01T00:00:00Z"')).toEqual(['usr_2']);
    expect(which('meta.created le "2023-01-01T00:00:00Z"')).toEqual(['usr_2']);
    expect(which('displayName gt "Am"')).toEqual(['usr_2']);
    // externalId and id are case-exact.
    expect(which('externalId eq "ext-alice"')).toEqual([]);
    expect(which('externalId eq "Ext-ALICE"')).toEqual(['usr_1']);
    expect(which('id eq "USR_1"')).toEqual([]);
  });

  it('takes attribute names and operators in any case, and the schema URN before a name', () => {
    expect(which('USERNAME EQ "alice@example.com"')).toEqual(['usr_1']);
    expect(which('urn:ietf:params:scim:schemas:core:2.0:User:userName eq "bob@example.org"')).toEqual([
      'usr_2',
    ]);
    expect(
      which('urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:department eq "research"'),
    ).toEqual(['usr_1']);
    expect(which('Name.GivenName eq "alice"')).toEqual(['usr_1']);
  });

  it('reads presence, booleans, null and multi-valued attributes', () => {
    expect(which('externalId pr')).toEqual(['usr_1']);
    expect(which('active eq true')).toEqual(['usr_1']);
    expect(which('active eq false')).toEqual(['usr_2']);
    expect(which('externalId eq null')).toEqual(['usr_2']);
    expect(which('emails.value eq "alice@home.example"')).toEqual(['usr_1']);
    // A complex attribute compares its value sub-attribute.
    expect(which('emails co "home.example"')).toEqual(['usr_1']);
  });

  it('filters the values of a multi-valued attribute (Entra matches on the work email)', () => {
    expect(which('emails[type eq "work"].value eq "alice@example.com"')).toEqual(['usr_1']);
    expect(which('emails[type eq "work"].value eq "alice@home.example"')).toEqual([]);
    expect(which('emails[type eq "home" and value ew ".example"]')).toEqual(['usr_1']);
    expect(which('emails[type eq "other"]')).toEqual([]);
  });

  it('combines with and, or, not and parentheses, and binds and tighter than or', () => {
    expect(which('active eq false or userName sw "alice" and displayName eq "nobody"')).toEqual(['usr_2']);
    expect(which('(active eq false or userName sw "alice") and displayName co "Lid"')).toEqual(['usr_1']);
    expect(which('not (active eq true)')).toEqual(['usr_2']);
    expect(which('not (userName pr) or id eq "usr_2"')).toEqual(['usr_2']);
  });

  it('filters groups by name and member', () => {
    expect(matches(parseFilter('displayName eq "GW-ADMINS"', GROUP), admins)).toBe(true);
    expect(matches(parseFilter('members.value eq "usr_1"', GROUP), admins)).toBe(true);
    expect(matches(parseFilter('members[value eq "usr_2"]', GROUP), admins)).toBe(false);
  });

  it('refuses bad filters with 400 invalidFilter naming the problem', () => {
    const cases: Array<[string, string]> = [
      ['', 'is empty'],
      ['userName', 'expected an operator'],
      ['userName eq', 'expected a value'],
      ['userName equals "x"', 'expected an operator'],
      ['userName eq "x" and', 'expected an attribute name'],
      ['(userName pr', "expected ')'"],
      ['userName pr)', 'unexpected'],
      ['userName eq "open', 'no closing quote'],
      ['userName eq "bad \\q escape"', 'not a valid JSON string'],
      ['nickname2 eq "x"', "'nickname2' is not an attribute of a User"],
      ['emails[kind eq "work"]', "'emails.kind' is not an attribute"],
      ['active gt true', 'is boolean'],
      ['active eq "yes"', 'is boolean'],
      ['userName gt 5', 'compare it with a "quoted string"'],
      ['name eq "Alice"', 'is complex'],
      ['meta.created gt "yesterday"', 'is not one'],
      ['userName[type eq "x"]', 'not a multi-valued complex attribute'],
      ['emails[type eq "work"', "expected ']'"],
      ['emails[type[value eq "x"] eq "y"]', 'cannot hold another'],
      ['not userName pr', "expected '('"],
      ['a.b.c eq "x"', 'is not an attribute path'],
      ['userName eq "x" userName eq "y"', 'unexpected'],
      [`${'('.repeat(40)}userName pr${')'.repeat(40)}`, 'nests deeper'],
      [`userName eq "${'x'.repeat(5000)}"`, 'longer than'],
    ];
    for (const [filter, expected] of cases) {
      const error = refusal(() => parseFilter(filter, USER));
      expect({ filter, status: error.status, scimType: error.scimType }).toEqual({
        filter,
        status: 400,
        scimType: 'invalidFilter',
      });
      expect(error.message).toContain(expected);
    }
  });

  it('never fails with anything but a 400 on arbitrary input', () => {
    const pieces = [
      'userName',
      'emails',
      '[',
      ']',
      '(',
      ')',
      '"x"',
      'eq',
      'and',
      'or',
      'not',
      'pr',
      '.value',
      'true',
      '5',
      ' ',
      '"',
      'urn:x:y',
    ];
    let seed = 7;
    const random = () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
      return seed / 2_147_483_648;
    };
    for (let round = 0; round < 2000; round++) {
      const text = Array.from(
        { length: 1 + Math.floor(random() * 8) },
        () => pieces[Math.floor(random() * pieces.length)],
      ).join(' ');
      try {
        matches(parseFilter(text, USER), alice);
      } catch (error) {
        expect(error).toBeInstanceOf(ScimError);
        expect((error as ScimError).status).toBe(400);
      }
    }
  });
});

describe('SCIM attribute paths', () => {
  it('resolves value paths, sub-attributes and extension attributes to their canonical names', () => {
    const members = parsePath('MEMBERS[Value eq "usr_1"]', GROUP);
    expect(members.attribute).toBe('members');
    expect(members.where).toMatchObject({ op: 'eq', value: 'usr_1' });
    const work = parsePath('emails[type eq "work"].VALUE', USER);
    expect([work.attribute, work.subAttribute]).toEqual(['emails', 'value']);
    const department = parsePath(
      'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:Department',
      USER,
    );
    expect([department.extension, department.attribute]).toEqual([
      'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User',
      'department',
    ]);
    expect(parsePath('name.familyName', USER)).toMatchObject({
      attribute: 'name',
      subAttribute: 'familyName',
    });
    // An attribute the schema does not have comes back without a definition (PATCH ignores it).
    expect(parsePath('favouriteColour', USER).definition).toBeUndefined();
  });

  it('refuses malformed paths with 400 invalidPath', () => {
    for (const path of [
      'members[value eq "x"',
      'members[',
      'a.b.c',
      '.value',
      'name[givenName eq "x"]',
      'emails[type eq "work"].',
      'members]',
    ]) {
      const error = refusal(() => parsePath(path, path.startsWith('members') ? GROUP : USER));
      expect({ path, status: error.status, scimType: error.scimType }).toEqual({
        path,
        status: 400,
        scimType: 'invalidPath',
      });
    }
  });
});
