import { randomBytes } from 'node:crypto';
import type { AuthConfig, Logger } from '@gw/shared';
import type { AdminUser, IdentityStore } from '../access/identity-store.ts';
import { mapIdentity } from '../access/role-mapping.ts';
import type { AuditEvent, AuditGate, AuditSink } from '../audit/audit-sink.ts';
import { invalidValue, ScimError, scimNotFound, uniqueness } from './scim-errors.ts';
import { matches, parseAttributeName, parseFilter, type ScimFilter, valuesAt } from './scim-filter.ts';
import { groupFields, groupResource, type ScimGroup, type ScimGroupStore } from './scim-groups.ts';
import { applyPatch, parsePatch } from './scim-patch.ts';
import { canonicalResource, type ScimResource, sameJson } from './scim-resource.ts';
import { GROUP, MAX_RESULTS, type ResourceType, SCHEMA, USER } from './scim-schema.ts';
import { type UserFields, userFields, userNameOf, userResource } from './scim-users.ts';

/** What a SCIM call brings besides its body: where `/scim/v2` is (for `meta.location`), and for the audit log. */
export interface ScimCall {
  base: string;
  requestId: string;
  source?: string | undefined;
  /** The `If-Match` header of a change: 412 unless the resource still has that version. */
  ifMatch?: string | undefined;
}

/** The query of a list (`GET /Users`, `POST /Users/.search`), checked by the router. */
export interface ListQuery {
  filter?: string | undefined;
  /** 1-based; below 1 is taken as 1 (RFC 7644 §3.4.2.4). */
  startIndex: number;
  /** Cut to MAX_RESULTS; 0 answers only `totalResults`. */
  count: number;
  sortBy?: string | undefined;
  sortOrder?: 'ascending' | 'descending' | undefined;
}

export interface ScimServiceOptions {
  identities: IdentityStore;
  groups: ScimGroupStore;
  /** `auth.role_mappings` (claim `groups` matches group names) and `auth.default_role`. */
  auth: Pick<AuthConfig, 'role_mappings' | 'default_role'>;
  audit?: AuditSink | undefined;
  logger: Logger;
}

const now = () => new Date().toISOString();

/** Hands an entry to the audit log without waiting for it; a failure to record is logged, never the caller's. */
export function recordAudit(sink: AuditSink | undefined, event: AuditEvent, logger: Logger): void {
  if (!sink) return;
  const failed = (error: unknown) => logger.warn({ err: error }, 'scim: audit entry not recorded');
  try {
    sink.record(event).catch(failed);
  } catch (error) {
    failed(error);
  }
}

function checkVersion(resource: ScimResource, ifMatch: string | undefined, what: string) {
  if (ifMatch === undefined) return;
  const version = String((resource['meta'] as { version: string }).version);
  const strong = (tag: string) => tag.trim().replace(/^W\//, '');
  const tags = ifMatch.split(',').map(strong);
  if (tags.includes('*') || tags.includes(strong(version))) return;
  throw new ScimError(412, `If-Match: ${what} changed; its version is now ${version}`);
}

/** The order of a list: by `sortBy` when given, else by creation (then id), so that pages do not overlap. */
function sorted(resources: ScimResource[], query: ListQuery, type: ResourceType): ScimResource[] {
  const created = (resource: ScimResource) =>
    `${(resource['meta'] as { created: string }).created}\u0000${String(resource['id'])}`;
  if (query.sortBy === undefined)
    return resources.sort((a, b) => (created(a) < created(b) ? -1 : created(a) > created(b) ? 1 : 0));
  const path = parseAttributeName(query.sortBy, type, 'sortBy');
  if (!path) throw invalidValue(`sortBy: '${query.sortBy.slice(0, 80)}' is not an attribute of a ${type.id}`);
  const target = path.subDefinition ?? path.definition;
  const key = (resource: ScimResource) => {
    const value = valuesAt(resource, path, true)[0];
    if (value === undefined) return undefined;
    const text = String(value);
    return target?.caseExact ? text : text.toLowerCase();
  };
  const direction = query.sortOrder === 'descending' ? -1 : 1;
  return resources.sort((a, b) => {
    const [x, y] = [key(a), key(b)];
    // Resources without the attribute come last, whichever the order (RFC 7644 §3.4.2.3).
    if (x === undefined || y === undefined) return x === y ? 0 : x === undefined ? 1 : -1;
    return x < y ? -direction : x > y ? direction : 0;
  });
}

/**
 * SCIM's Users and Groups over the identity store and the group store (transport-free; scim-router.ts serves
 * it). Every change of a user or a group recomputes the roles and teams of the users it touches from the
 * names of their groups (`auth.role_mappings`, else `auth.default_role`, else none) and is recorded in the
 * audit log. Changes are serialised in this process; across replicas each is a read and a write of one
 * document (docs/scim.md "Concurrency").
 */
export class ScimService {
  private readonly options: ScimServiceOptions;
  private queue: Promise<unknown> = Promise.resolve();

  constructor(options: ScimServiceOptions) {
    this.options = options;
  }

  /** Records of the change under way, held before its answer (the audit log fails closed). */
  private holding: Array<Promise<void>> | undefined;

  /** Changes, one at a time; each is admitted and answered as `/api` changes are (docs/admin-access.md "Audit log"). */
  private serial<T>(task: () => Promise<T>): Promise<T> {
    const audited = () => this.audited(task);
    const run = this.queue.then(audited, audited);
    this.queue = run.catch(() => undefined);
    return run;
  }

  /**
   * A change made only while the audit log can hold its records (503 otherwise, nothing changed), and answered
   * only once they are held (503 when they could not be: the sink keeps them and writes them later).
   */
  private async audited<T>(task: () => Promise<T>): Promise<T> {
    const gate = this.gate();
    if (!gate) return task();
    await gate.admit();
    const holds: Array<Promise<void>> = [];
    this.holding = holds;
    let result: T;
    try {
      result = await task();
    } catch (error) {
      // A change that failed part way: what it recorded is still handed over (and no rejection left unread).
      await Promise.allSettled(holds);
      throw error;
    } finally {
      this.holding = undefined;
    }
    // Every record is handed over; the first failure to hold one is the answer.
    const outcomes = await Promise.allSettled(holds);
    const failed = outcomes.find((outcome) => outcome.status === 'rejected');
    if (failed) throw failed.reason;
    return result;
  }

  private gate(): AuditGate | undefined {
    const sink = this.options.audit;
    return sink && 'admit' in sink && 'hold' in sink ? (sink as AuditGate) : undefined;
  }

  private record(call: ScimCall, event: Omit<AuditEvent, 'actor' | 'requestId' | 'source'>) {
    const entry = { actor: 'scim', requestId: call.requestId, source: call.source, ...event };
    const gate = this.gate();
    if (gate && this.holding) this.holding.push(gate.hold(entry));
    else recordAudit(this.options.audit, entry, this.options.logger);
  }

  /** The roles and teams a user's groups give (none: no role, so nothing the user holds acts). */
  private access(userId: string, groups: readonly ScimGroup[]): Pick<AdminUser, 'roles' | 'team_ids'> {
    const names = groups.filter((group) => group.members.includes(userId)).map((group) => group.display_name);
    const mapped = mapIdentity({ groups: names }, this.options.auth.role_mappings);
    const fallback = this.options.auth.default_role;
    const roles = mapped.roles.length > 0 ? mapped.roles : fallback ? [fallback] : [];
    return { roles, team_ids: mapped.teamIds };
  }

  private page(
    resources: ScimResource[],
    filter: ScimFilter | undefined,
    query: ListQuery,
    type: ResourceType,
  ) {
    const selected = sorted(
      filter ? resources.filter((resource) => matches(filter, resource)) : resources,
      query,
      type,
    );
    const startIndex = Math.max(1, query.startIndex);
    const count = Math.min(Math.max(0, query.count), MAX_RESULTS);
    const Resources = selected.slice(startIndex - 1, startIndex - 1 + count);
    return {
      schemas: [SCHEMA.listResponse],
      totalResults: selected.length,
      startIndex,
      itemsPerPage: Resources.length,
      Resources,
    };
  }

  private async usersById(): Promise<Map<string, AdminUser>> {
    return new Map((await this.options.identities.listUsers()).map((user) => [user.id, user]));
  }

  // --- Users ------------------------------------------------------------------------------------------

  async listUsers(query: ListQuery, call: ScimCall) {
    const filter = query.filter === undefined ? undefined : parseFilter(query.filter, USER);
    const [users, groups] = await Promise.all([
      this.options.identities.listUsers(),
      this.options.groups.list(),
    ]);
    return this.page(
      users.map((user) => userResource(user, groups, call.base)),
      filter,
      query,
      USER,
    );
  }

  private async existingUser(id: string): Promise<AdminUser> {
    const user = await this.options.identities.getUser(id);
    if (!user) throw scimNotFound(`no User '${id.slice(0, 80)}' exists`);
    return user;
  }

  async getUser(id: string, call: ScimCall): Promise<ScimResource> {
    const user = await this.existingUser(id);
    return userResource(user, await this.options.groups.list(), call.base);
  }

  /** 409 uniqueness when another user has the email, or the userName (any case). */
  private async checkUnique(fields: UserFields, selfId?: string) {
    const { identities } = this.options;
    const holder = await identities.findUserByEmail(fields.email);
    if (holder && holder.id !== selfId)
      throw uniqueness(`userName: a user with the email ${fields.email} exists (id ${holder.id})`);
    const userName = (fields.user_name ?? fields.email).toLowerCase();
    const taken = (await identities.listUsers()).find(
      (user) => user.id !== selfId && userNameOf(user).toLowerCase() === userName,
    );
    if (taken)
      throw uniqueness(`userName: '${fields.user_name ?? fields.email}' is taken (user ${taken.id})`);
  }

  createUser(body: Record<string, unknown>, call: ScimCall): Promise<ScimResource> {
    return this.serial(async () => {
      const fields = userFields(canonicalResource(body, USER));
      await this.checkUnique(fields);
      const groups = await this.options.groups.list();
      const id = `usr_${randomBytes(6).toString('hex')}`;
      const time = now();
      const user: AdminUser = {
        id,
        ...fields,
        ...this.access(id, groups),
        created_at: time,
        updated_at: time,
        source: 'scim',
      };
      await this.options.identities.putUser(user);
      this.record(call, { action: 'create', target: `scim:Users/${id}`, after: user, status: 201 });
      return userResource(user, groups, call.base);
    });
  }

  /** Writes the user with new fields, roles and teams recomputed (nothing when nothing changed). */
  private async updateUser(existing: AdminUser, fields: UserFields, call: ScimCall): Promise<ScimResource> {
    await this.checkUnique(fields, existing.id);
    const groups = await this.options.groups.list();
    const {
      user_name: _userName,
      external_id: _externalId,
      given_name: _givenName,
      family_name: _familyName,
      scim_attributes: _attributes,
      updated_at: _updatedAt,
      ...kept
    } = existing;
    const changed = { ...kept, ...fields, ...this.access(existing.id, groups) };
    if (sameJson(changed, { ...existing, updated_at: undefined }))
      return userResource(existing, groups, call.base);
    const user: AdminUser = { ...changed, updated_at: now() };
    await this.options.identities.putUser(user);
    this.record(call, {
      action: 'update',
      target: `scim:Users/${user.id}`,
      before: existing,
      after: user,
      status: 200,
    });
    return userResource(user, groups, call.base);
  }

  replaceUser(id: string, body: Record<string, unknown>, call: ScimCall): Promise<ScimResource> {
    return this.serial(async () => {
      const existing = await this.existingUser(id);
      checkVersion(await this.getUser(id, call), call.ifMatch, `User '${id}'`);
      return this.updateUser(existing, userFields(canonicalResource(body, USER), existing), call);
    });
  }

  patchUser(id: string, body: Record<string, unknown>, call: ScimCall): Promise<ScimResource> {
    return this.serial(async () => {
      const operations = parsePatch(body, USER);
      const existing = await this.existingUser(id);
      const current = userResource(existing, await this.options.groups.list(), call.base);
      checkVersion(current, call.ifMatch, `User '${id}'`);
      return this.updateUser(existing, userFields(applyPatch(current, operations, USER), existing), call);
    });
  }

  /** Deletes the user, revokes their API tokens and takes them out of every group. */
  deleteUser(id: string, call: ScimCall): Promise<void> {
    return this.serial(async () => {
      const existing = await this.existingUser(id);
      checkVersion(await this.getUser(id, call), call.ifMatch, `User '${id}'`);
      await this.options.identities.deleteUser(id);
      for (const group of await this.options.groups.list()) {
        if (!group.members.includes(id)) continue;
        const after = {
          ...group,
          members: group.members.filter((member) => member !== id),
          updated_at: now(),
        };
        await this.options.groups.put(after);
        this.record(call, {
          action: 'update',
          target: `scim:Groups/${group.id}`,
          before: group,
          after,
          status: 204,
          detail: `member ${id} deleted`,
        });
      }
      this.record(call, { action: 'delete', target: `scim:Users/${id}`, before: existing, status: 204 });
    });
  }

  // --- Groups -----------------------------------------------------------------------------------------

  async listGroups(query: ListQuery, call: ScimCall) {
    const filter = query.filter === undefined ? undefined : parseFilter(query.filter, GROUP);
    const [groups, users] = await Promise.all([this.options.groups.list(), this.usersById()]);
    return this.page(
      groups.map((group) => groupResource(group, users, call.base)),
      filter,
      query,
      GROUP,
    );
  }

  private async existingGroup(id: string): Promise<ScimGroup> {
    const group = await this.options.groups.get(id);
    if (!group) throw scimNotFound(`no Group '${id.slice(0, 80)}' exists`);
    return group;
  }

  async getGroup(id: string, call: ScimCall): Promise<ScimResource> {
    return groupResource(await this.existingGroup(id), await this.usersById(), call.base);
  }

  /** The group's fields, checked: members are users, the name is no other group's (any case). */
  private async checkedGroup(resource: ScimResource, users: ReadonlyMap<string, AdminUser>, selfId?: string) {
    const fields = groupFields(resource);
    const missing = fields.members.find((member) => !users.has(member));
    if (missing !== undefined)
      throw invalidValue(`members: no user '${missing.slice(0, 80)}' exists (provision the user first)`);
    const name = fields.display_name.toLowerCase();
    const clash = (await this.options.groups.list()).find(
      (group) => group.id !== selfId && group.display_name.toLowerCase() === name,
    );
    if (clash) throw uniqueness(`displayName: a group named '${clash.display_name}' exists (id ${clash.id})`);
    return fields;
  }

  /** Recomputes the roles and teams of these users from the groups they are now in. */
  private async recompute(userIds: Iterable<string>, call: ScimCall) {
    const groups = await this.options.groups.list();
    for (const id of new Set(userIds)) {
      const user = await this.options.identities.getUser(id);
      if (!user) continue;
      const access = this.access(id, groups);
      if (sameJson(access.roles, user.roles) && sameJson(access.team_ids, user.team_ids)) continue;
      const after: AdminUser = { ...user, ...access, updated_at: now() };
      await this.options.identities.putUser(after);
      this.record(call, {
        action: 'update',
        target: `scim:Users/${id}`,
        before: user,
        after,
        status: 200,
        detail: 'roles and teams follow the groups (auth.role_mappings)',
      });
    }
  }

  createGroup(body: Record<string, unknown>, call: ScimCall): Promise<ScimResource> {
    return this.serial(async () => {
      const users = await this.usersById();
      const fields = await this.checkedGroup(canonicalResource(body, GROUP), users);
      const time = now();
      const group: ScimGroup = {
        id: `grp_${randomBytes(6).toString('hex')}`,
        ...fields,
        created_at: time,
        updated_at: time,
      };
      await this.options.groups.put(group);
      this.record(call, { action: 'create', target: `scim:Groups/${group.id}`, after: group, status: 201 });
      await this.recompute(group.members, call);
      return groupResource(group, users, call.base);
    });
  }

  /** Writes the group with new fields and recomputes the users whose groups changed. */
  private async updateGroup(
    existing: ScimGroup,
    resource: ScimResource,
    call: ScimCall,
  ): Promise<ScimResource> {
    const users = await this.usersById();
    const fields = await this.checkedGroup(resource, users, existing.id);
    const { external_id: _externalId, updated_at: _updatedAt, ...kept } = existing;
    const changed = { ...kept, ...fields };
    if (sameJson(changed, { ...existing, updated_at: undefined }))
      return groupResource(existing, users, call.base);
    const group: ScimGroup = { ...changed, updated_at: now() };
    await this.options.groups.put(group);
    this.record(call, {
      action: 'update',
      target: `scim:Groups/${group.id}`,
      before: existing,
      after: group,
      status: 200,
    });
    // A new name can change every member's roles; otherwise only those who came or went.
    const affected =
      group.display_name === existing.display_name
        ? [
            ...group.members.filter((id) => !existing.members.includes(id)),
            ...existing.members.filter((id) => !group.members.includes(id)),
          ]
        : [...existing.members, ...group.members];
    await this.recompute(affected, call);
    return groupResource(group, users, call.base);
  }

  replaceGroup(id: string, body: Record<string, unknown>, call: ScimCall): Promise<ScimResource> {
    return this.serial(async () => {
      const existing = await this.existingGroup(id);
      checkVersion(await this.getGroup(id, call), call.ifMatch, `Group '${id}'`);
      return this.updateGroup(existing, canonicalResource(body, GROUP), call);
    });
  }

  patchGroup(id: string, body: Record<string, unknown>, call: ScimCall): Promise<ScimResource> {
    return this.serial(async () => {
      const operations = parsePatch(body, GROUP);
      const existing = await this.existingGroup(id);
      const current = await this.getGroup(id, call);
      checkVersion(current, call.ifMatch, `Group '${id}'`);
      return this.updateGroup(existing, applyPatch(current, operations, GROUP), call);
    });
  }

  deleteGroup(id: string, call: ScimCall): Promise<void> {
    return this.serial(async () => {
      const existing = await this.existingGroup(id);
      checkVersion(await this.getGroup(id, call), call.ifMatch, `Group '${id}'`);
      await this.options.groups.delete(id);
      this.record(call, { action: 'delete', target: `scim:Groups/${id}`, before: existing, status: 204 });
      await this.recompute(existing.members, call);
    });
  }
}
