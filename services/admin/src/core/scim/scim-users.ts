import { z } from 'zod';
import type { AdminUser } from '../access/identity-store.ts';
import { invalidValue } from './scim-errors.ts';
import type { ScimGroup } from './scim-groups.ts';
import { isObject, type ScimResource, withMeta } from './scim-resource.ts';
import { SCHEMA } from './scim-schema.ts';

/**
 * A SCIM User is an admin user (identity-store.ts). gw's own fields are the truth for what it acts on
 * (userName and email, display name, names, externalId, active) and for groups; the other attributes a client
 * sends are kept as sent in `scim_attributes` and answered back.
 */

/** Attributes gw maps to its own fields, or answers itself: never kept in `scim_attributes`. */
const MAPPED = new Set([
  'schemas',
  'id',
  'meta',
  'groups',
  'password',
  'userName',
  'externalId',
  'displayName',
  'active',
]);

/** Most bytes the other attributes of one user take (as JSON). */
const MAX_ATTRIBUTE_BYTES = 16 * 1024;
/** Longest display name (as `/api/users` takes it). */
const MAX_NAME = 200;

const isEmail = (value: string) => z.email().safeParse(value).success;

/** The userName of a user: their email unless SCIM gave another one. */
export const userNameOf = (user: AdminUser) => user.user_name ?? user.email;

/** The user as SCIM answers it (`base` is the URL of `/scim/v2`). */
export function userResource(user: AdminUser, groups: readonly ScimGroup[], base: string): ScimResource {
  const { name: storedName, emails, ...others } = user.scim_attributes ?? {};
  const name = {
    ...(isObject(storedName) ? storedName : {}),
    ...(user.given_name !== undefined && { givenName: user.given_name }),
    ...(user.family_name !== undefined && { familyName: user.family_name }),
  };
  const memberOf = groups
    .filter((group) => group.members.includes(user.id))
    .map((group) => ({
      value: group.id,
      $ref: `${base}/Groups/${group.id}`,
      display: group.display_name,
      type: 'direct',
    }));
  const resource: ScimResource = {
    schemas: [SCHEMA.user, ...(others[SCHEMA.enterpriseUser] ? [SCHEMA.enterpriseUser] : [])],
    id: user.id,
    ...(user.external_id !== undefined && { externalId: user.external_id }),
    userName: userNameOf(user),
    ...(Object.keys(name).length > 0 && { name }),
    displayName: user.name,
    emails: Array.isArray(emails) ? emails : [{ value: user.email, type: 'work', primary: true }],
    active: user.active,
    ...(memberOf.length > 0 && { groups: memberOf }),
    ...others,
  };
  return withMeta(resource, {
    resourceType: 'User',
    created: user.created_at,
    lastModified: user.updated_at,
    location: `${base}/Users/${user.id}`,
  });
}

/** The email gw knows a person by: userName when it is an email address, else their primary email. */
function emailOf(userName: string, emails: unknown): string {
  if (isEmail(userName)) return userName.toLowerCase();
  const list = Array.isArray(emails) ? emails.filter(isObject) : [];
  const primary =
    list.find((email) => email['primary'] === true) ??
    list.find((email) => String(email['type']).toLowerCase() === 'work') ??
    list[0];
  const value = primary?.['value'];
  if (typeof value === 'string' && isEmail(value)) return value.toLowerCase();
  throw invalidValue(
    `userName: '${userName.slice(0, 80)}' is not an email address and emails holds none: gw knows people by email (send an email as userName, or a primary email)`,
  );
}

/** The fields of an admin user a SCIM User resource gives (400 invalidValue naming a missing or bad one). */
export type UserFields = Pick<
  AdminUser,
  'email' | 'name' | 'active' | 'user_name' | 'external_id' | 'given_name' | 'family_name' | 'scim_attributes'
>;

/**
 * The fields of a resource in canonical form (canonicalResource, or a patched resource). `active` keeps the
 * user's value when the resource leaves it out (a PUT without `active` never reactivates anyone); a new user
 * is active.
 */
export function userFields(resource: ScimResource, existing?: AdminUser): UserFields {
  const userName = resource['userName'];
  if (typeof userName !== 'string' || userName.trim() === '') throw invalidValue('userName: is required');
  const email = emailOf(userName, resource['emails']);
  const name = isObject(resource['name']) ? resource['name'] : {};
  const givenName = typeof name['givenName'] === 'string' ? name['givenName'] : undefined;
  const familyName = typeof name['familyName'] === 'string' ? name['familyName'] : undefined;
  const displayName = resource['displayName'];
  if (typeof displayName === 'string' && displayName.length > MAX_NAME)
    throw invalidValue(`displayName: is longer than ${MAX_NAME} characters`);
  const formatted = typeof name['formatted'] === 'string' ? name['formatted'] : undefined;
  const joined = [givenName, familyName].filter(Boolean).join(' ');
  const shown =
    (typeof displayName === 'string' && displayName.trim()) || formatted?.trim() || joined || userName;

  const attributes: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(resource)) if (!MAPPED.has(key)) attributes[key] = value;
  const { givenName: _given, familyName: _family, ...otherNames } = name;
  if (Object.keys(otherNames).length > 0) attributes['name'] = otherNames;
  else delete attributes['name'];
  const bytes = Buffer.byteLength(JSON.stringify(attributes));
  if (bytes > MAX_ATTRIBUTE_BYTES)
    throw invalidValue(
      `the user's other attributes take ${bytes} bytes; gw keeps at most ${MAX_ATTRIBUTE_BYTES}`,
    );

  const active = resource['active'];
  const externalId = resource['externalId'];
  return {
    email,
    name: shown.slice(0, MAX_NAME),
    active: typeof active === 'boolean' ? active : (existing?.active ?? true),
    ...(userName !== email && { user_name: userName }),
    ...(typeof externalId === 'string' && { external_id: externalId }),
    ...(givenName !== undefined && { given_name: givenName }),
    ...(familyName !== undefined && { family_name: familyName }),
    ...(Object.keys(attributes).length > 0 && { scim_attributes: attributes }),
  };
}
