import type {
  AdminTokenView,
  AdminUser,
  CreatedToken,
  RoleDefinition,
  RoleInput,
  TokenInput,
  UserInput,
} from '@gw/admin/api-types';
import { useAuth } from '../auth.tsx';
import { CrudSection } from '../crud.tsx';
import { display, formatTime } from '../format.ts';
import { PageHeader } from '../ui.tsx';
import { RoleForm, TokenForm, UserForm } from './access-forms.tsx';

export default function Access() {
  const { can } = useAuth();
  return (
    <>
      <PageHeader title="Users, roles and API tokens" />
      {can('users:read') && (
        <CrudSection<AdminUser>
          title="Users"
          listPath="/api/users"
          itemPath={(id) => `/api/users/${encodeURIComponent(id)}`}
          writePermission="users:write"
          editMethod="PATCH"
          editBody={(item) =>
            ({
              name: item.name,
              email: item.email,
              roles: item.roles,
              team_ids: item.team_ids,
              active: item.active,
            }) satisfies UserInput
          }
          createTemplate={{ email: 'ada@example.com', name: 'Ada', roles: ['viewer'] } satisfies UserInput}
          form={(props) => <UserForm {...props} />}
          columns={[
            { header: 'Id', cell: (item) => display(item.id) },
            { header: 'Name', cell: (item) => display(item.name) },
            { header: 'Email', cell: (item) => display(item.email) },
            { header: 'Roles', cell: (item) => display(item.roles) },
            { header: 'Teams', cell: (item) => display(item.team_ids) },
            { header: 'Active', cell: (item) => display(item.active) },
          ]}
        />
      )}
      {can('roles:read') && (
        <CrudSection<RoleDefinition>
          title="Roles"
          listPath="/api/roles"
          itemPath={(id) => `/api/roles/${encodeURIComponent(id)}`}
          writePermission="roles:write"
          editMethod="PUT"
          createTemplate={
            { id: 'auditor', name: 'Auditor', permissions: ['audit:read', 'logs:read'] } satisfies RoleInput
          }
          form={(props) => <RoleForm {...props} />}
          changeable={(role) => !role.built_in}
          columns={[
            { header: 'Id', cell: (item) => display(item.id) },
            { header: 'Name', cell: (item) => display(item.name) },
            { header: 'Permissions', cell: (item) => (item.permissions ?? []).join(', ') },
            { header: 'Team scoped', cell: (item) => display(item.team_scoped) },
            { header: 'Built in', cell: (item) => display(item.built_in) },
          ]}
        />
      )}
      {can('tokens:read') && (
        <CrudSection<AdminTokenView, CreatedToken>
          title="API tokens"
          listPath="/api/tokens"
          itemPath={(id) => `/api/tokens/${encodeURIComponent(id)}`}
          writePermission="tokens:write"
          editMethod={false}
          createTemplate={{ name: 'ci', role: 'viewer', expires_in_seconds: 86_400 } satisfies TokenInput}
          form={({ submit, cancel }) => <TokenForm submit={submit} cancel={cancel} />}
          onceValue={(answer) => answer.token}
          columns={[
            { header: 'Id', cell: (item) => display(item.id) },
            { header: 'Name', cell: (item) => display(item.name) },
            { header: 'Role', cell: (item) => display(item.role) },
            { header: 'User', cell: (item) => display(item.user_id) },
            { header: 'Expires', cell: (item) => formatTime(item.expires_at) },
            { header: 'Last used', cell: (item) => formatTime(item.last_used_at) },
          ]}
        />
      )}
    </>
  );
}
