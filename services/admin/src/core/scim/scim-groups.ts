import type { Store } from '@gw/shared/store';
import { z } from 'zod';
import type { AdminUser } from '../access/identity-store.ts';
import { invalidValue } from './scim-errors.ts';
import { isObject, type ScimResource, withMeta } from './scim-resource.ts';
import { SCHEMA } from './scim-schema.ts';

/**
 * SCIM groups in the state store (the data directory in embedded mode, Redis in a cluster: every admin replica
 * reads the same documents). A group's display name is what `auth.role_mappings` rules match (claim
 * `groups`); its members are admin user ids.
 */
const GROUPS = 'scim-groups';

const groupSchema = z.object({
  id: z.string(),
  display_name: z.string(),
  external_id: z.string().optional(),
  /** Admin user ids. */
  members: z.array(z.string()),
  created_at: z.string(),
  updated_at: z.string(),
});
export type ScimGroup = z.infer<typeof groupSchema>;

/** Longest group name. */
const MAX_NAME = 256;

export class ScimGroupStore {
  private readonly store: Store;

  constructor(options: { store: Store }) {
    this.store = options.store;
  }

  async list(): Promise<ScimGroup[]> {
    return (await this.store.list(GROUPS)).map((entry) => groupSchema.parse(entry.value));
  }

  async get(id: string): Promise<ScimGroup | undefined> {
    const value = await this.store.get(GROUPS, id);
    return value === undefined ? undefined : groupSchema.parse(value);
  }

  put(group: ScimGroup): Promise<void> {
    return this.store.put(GROUPS, group.id, group);
  }

  delete(id: string): Promise<boolean> {
    return this.store.delete(GROUPS, id);
  }
}

/** The group as SCIM answers it (`base` is the URL of `/scim/v2`); members that are no user any more are left out. */
export function groupResource(
  group: ScimGroup,
  users: ReadonlyMap<string, AdminUser>,
  base: string,
): ScimResource {
  const members = group.members.flatMap((id) => {
    const user = users.get(id);
    return user ? [{ value: id, $ref: `${base}/Users/${id}`, display: user.name, type: 'User' }] : [];
  });
  return withMeta(
    {
      schemas: [SCHEMA.group],
      id: group.id,
      ...(group.external_id !== undefined && { externalId: group.external_id }),
      displayName: group.display_name,
      members,
    },
    {
      resourceType: 'Group',
      created: group.created_at,
      lastModified: group.updated_at,
      location: `${base}/Groups/${group.id}`,
    },
  );
}

/** The fields of a group a resource gives: 400 invalidValue for a missing name or a member that is not a user id. */
export function groupFields(
  resource: ScimResource,
): Pick<ScimGroup, 'display_name' | 'external_id' | 'members'> {
  const displayName = resource['displayName'];
  if (typeof displayName !== 'string' || displayName.trim() === '')
    throw invalidValue('displayName: is required');
  if (displayName.length > MAX_NAME) throw invalidValue(`displayName: is longer than ${MAX_NAME} characters`);
  const members: string[] = [];
  const list = Array.isArray(resource['members']) ? resource['members'] : [];
  for (const [index, member] of list.entries()) {
    const value = isObject(member) ? member['value'] : undefined;
    if (typeof value !== 'string' || value === '')
      throw invalidValue(`members[${index}].value: is required (a user id)`);
    if (isObject(member) && typeof member['type'] === 'string' && member['type'].toLowerCase() === 'group')
      throw invalidValue(
        `members[${index}]: '${value}' is a group; gw's groups hold users only (no nested groups)`,
      );
    if (!members.includes(value)) members.push(value);
  }
  const externalId = resource['externalId'];
  return {
    display_name: displayName,
    ...(typeof externalId === 'string' && { external_id: externalId }),
    members,
  };
}
