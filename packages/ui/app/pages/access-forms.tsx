// Users, roles and API tokens by form: a user's roles and teams as check boxes, a role's permissions as a
// checklist saying what each one opens, a token's role and lifetime (its value shown once by the section).
import type {
  AdminUser,
  Permission,
  RoleDefinition,
  RoleInput,
  Team,
  TokenInput,
  UserInput,
} from '@gw/admin/api-types';
import { CheckboxGroup, chosen } from '../choice-fields.tsx';
import { Field, Form, useApiQuery } from '../ui.tsx';

/** What each permission opens (docs/admin-access.md): every permission, so a new one fails the typecheck here. */
const PERMISSION_MEANINGS: Record<Permission, string> = {
  'providers:read': 'see providers and their keys (values redacted)',
  'providers:write': 'add, change and remove providers, keys and model aliases; test keys',
  'keys:read': 'see virtual keys; the Playground',
  'keys:write': 'create, edit, rotate, deactivate and delete virtual keys',
  'teams:read': 'see teams and business units',
  'teams:write': 'create, edit and delete teams and business units, and their budgets',
  'customers:read': 'see customers',
  'customers:write': 'create, edit and delete customers, and their budgets',
  'budgets:read': 'see budget use and the spend report',
  'budgets:write': 'change budgets',
  'mcp:read': 'see MCP clients and their tools',
  'mcp:write': 'add, filter, reconnect and remove MCP clients (http and sse)',
  'guardrails:read': 'see guardrail profiles and rules',
  'guardrails:write': 'change guardrail profiles and rules',
  'logs:read': 'Overview, Logs, the live tail and the Cache page',
  'logs:write': 'change request logs',
  'config:read': 'see the system settings',
  'config:write': 'change the system settings',
  'users:read': 'see users',
  'users:write': 'add, change and remove users',
  'tokens:read': 'see API tokens',
  'tokens:write': 'create and revoke API tokens',
  'roles:read': 'see roles',
  'roles:write': 'create, change and delete custom roles',
  'audit:read': 'the audit log and its verification',
  'audit:write': 'change the audit log',
  'cache:read': 'see the response cache',
  'cache:write': 'remove cache entries and scopes',
  'health:read': 'Routing health and the load balancer settings',
  'health:write': 'change the load balancer settings',
  'alerts:read': 'see alert channels, rules and history',
  'alerts:write': 'change alert channels and rules; send tests',
  'vault:read': 'see secret references and their state',
  'vault:write': 'refresh secret references',
  'routing:read': 'see routing rules; dry runs',
  'routing:write': 'change routing rules',
  'pricing:read': 'see prices in force',
  'pricing:write': 'set and remove price overrides and the unpriced default',
  'secrets:read': 'see secret fields unredacted',
  'mcp:remote': 'add http and sse MCP clients at any allowed URL',
  'secrets:reference': 'name env. and secret-manager references (Admin only)',
};

const PERMISSIONS = Object.keys(PERMISSION_MEANINGS) as Permission[];
/** Admin's alone: a custom role is refused it. */
const ADMIN_ONLY: Permission[] = ['secrets:reference'];

interface FormProps<Item> {
  item?: Item | undefined;
  submit: (body: unknown) => Promise<void>;
  cancel: () => void;
}

export function UserForm({ item, submit, cancel }: FormProps<AdminUser>) {
  const roles = useApiQuery<RoleDefinition[]>('/api/roles');
  const teams = useApiQuery<Team[]>('/api/governance/teams');
  return (
    <Form
      label={item ? `Edit user ${item.email}` : 'Add a user'}
      submit={item ? 'Save user' : 'Add user'}
      onCancel={cancel}
      onSubmit={(values) => {
        const body = {
          email: values.email ?? '',
          name: values.name ?? '',
          roles: chosen(values, 'role'),
          team_ids: chosen(values, 'team'),
          active: values.active === 'yes',
        } satisfies UserInput;
        return submit(body);
      }}
    >
      <Field label="Email" name="email" type="email" required defaultValue={item?.email} />
      <Field label="Name" name="name" required defaultValue={item?.name} />
      <CheckboxGroup
        legend="Roles"
        name="role"
        checked={item?.roles ?? ['viewer']}
        choices={(roles.data ?? []).map((role) => ({
          value: role.id,
          label: role.name,
          hint: role.description,
        }))}
      />
      <CheckboxGroup
        legend="Teams"
        name="team"
        hint="A team-scoped role acts on these teams' keys only."
        checked={item?.team_ids}
        choices={(teams.data ?? []).map((team) => ({ value: team.id, label: team.name }))}
      />
      <Field
        label="Active"
        name="active"
        options={['yes', 'no']}
        defaultValue={item?.active === false ? 'no' : 'yes'}
        hint="An inactive user's sessions and tokens are refused at once."
      />
    </Form>
  );
}

export function RoleForm({ item, submit, cancel }: FormProps<RoleDefinition>) {
  return (
    <Form
      label={item ? `Edit role ${item.id}` : 'Create a role'}
      submit={item ? 'Save role' : 'Create role'}
      onCancel={cancel}
      onSubmit={(values) => {
        const body = {
          id: item?.id ?? values.id ?? '',
          name: values.name ?? '',
          description: values.description ?? '',
          permissions: chosen(values, 'permission'),
          team_scoped: values.team_scoped === 'yes',
        } satisfies RoleInput;
        return submit(body);
      }}
    >
      {!item && (
        <Field
          label="Id"
          name="id"
          required
          placeholder="auditor"
          hint="Lowercase letters, digits, - or _."
        />
      )}
      <Field label="Name" name="name" required defaultValue={item?.name} placeholder="Auditor" />
      <Field label="Description" name="description" defaultValue={item?.description} />
      <Field
        label="Team scoped"
        name="team_scoped"
        options={['no', 'yes']}
        defaultValue={item?.team_scoped ? 'yes' : 'no'}
        hint="Yes: its holders act on the virtual keys, logs and budgets of their own teams only."
      />
      <CheckboxGroup
        legend="Permissions"
        name="permission"
        hint="Read covers looking; write covers every change. Each says what it opens."
        checked={item?.permissions}
        choices={PERMISSIONS.filter((permission) => !ADMIN_ONLY.includes(permission)).map((permission) => ({
          value: permission,
          hint: PERMISSION_MEANINGS[permission],
        }))}
      />
    </Form>
  );
}

/** A token's lifetimes to pick from, in seconds (none: it lasts until revoked). */
const LIFETIMES = [
  { value: '86400', label: '1 day' },
  { value: '604800', label: '7 days' },
  { value: '2592000', label: '30 days' },
  { value: '7776000', label: '90 days' },
  { value: '31536000', label: '1 year' },
  { value: '', label: 'never (until revoked)' },
];

export function TokenForm({ submit, cancel }: FormProps<never>) {
  const roles = useApiQuery<RoleDefinition[]>('/api/roles');
  return (
    <Form
      label="Create an API token"
      submit="Create token"
      onCancel={cancel}
      onSubmit={(values) => {
        const body: TokenInput = {
          name: values.name ?? '',
          role: values.role ?? 'viewer',
          ...(values.user_id && { user_id: values.user_id }),
          ...(values.expires_in_seconds && { expires_in_seconds: Number(values.expires_in_seconds) }),
        };
        return submit(body);
      }}
    >
      <Field
        label="Name"
        name="name"
        required
        placeholder="ci"
        hint="What it is for: shown in the audit log."
      />
      <Field
        label="Role"
        name="role"
        defaultValue="viewer"
        options={(roles.data ?? [{ id: 'viewer', name: 'Viewer' }]).map((role) => ({
          value: role.id,
          label: role.name,
        }))}
      />
      <Field label="Expires after" name="expires_in_seconds" defaultValue="2592000" options={LIFETIMES} />
      <Field label="User id" name="user_id" hint="Optional: the user it acts for (their teams scope it)." />
      <p className="muted">Its value is shown once, when it is made: gw keeps only a hash.</p>
    </Form>
  );
}
