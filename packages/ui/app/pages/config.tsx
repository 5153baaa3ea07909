import type { SystemSettingsView } from '@gw/admin/api-types';
import { useState } from 'react';
import { api } from '../api.ts';
import { useAuth } from '../auth.tsx';
import { FormTabs, JsonForm, PageHeader, QueryView, useApiMutation, useApiQuery } from '../ui.tsx';
import { SettingsSections } from './settings-sections.tsx';

export default function Config() {
  const { can } = useAuth();
  const [editing, setEditing] = useState(false);
  const config = useApiQuery<SystemSettingsView>('/api/config');
  const save = useApiMutation(
    (body: unknown) => api('/api/config', { method: 'PUT', body }),
    // The gateway's address follows client.public_url.
    ['/api/config', '/api/gateway-address'],
  );
  return (
    <>
      <PageHeader title="System config">
        {can('config:write') && !editing && (
          <button type="button" onClick={() => setEditing(true)}>
            Edit
          </button>
        )}
      </PageHeader>
      <p className="muted">
        Settings every process applies to its next request (client, governance.settings, mcp, logs, cache),
        except those marked to apply at the next start. A change names only the fields it changes.
      </p>
      <QueryView query={config}>
        {(body) =>
          editing ? (
            <FormTabs
              label="Change system settings"
              form={<SettingsSections settings={body} save={(next) => save.mutateAsync(next)} />}
              json={
                <JsonForm
                  label="Change system settings"
                  submit="Save settings"
                  initial={body}
                  onCancel={() => setEditing(false)}
                  onSubmit={async (next) => {
                    await save.mutateAsync(next);
                    setEditing(false);
                  }}
                />
              }
            />
          ) : (
            <pre className="content">{JSON.stringify(body, null, 2)}</pre>
          )
        }
      </QueryView>
    </>
  );
}
