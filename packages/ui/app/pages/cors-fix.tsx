// A CORS refusal's way out, where the operator may take it: this console's origin added to
// `client.cors_allowed_origins` in one click (a system setting: every ingress applies it to its next request),
// or a link to where it is set.
import type { SystemSettingsView } from '@gw/admin/api-types';
import { useState } from 'react';
import { Link } from 'react-router';
import { api } from '../api.ts';
import { useAuth } from '../auth.tsx';
import { ErrorMessage } from '../ui.tsx';

export function CorsFix() {
  const { can } = useAuth();
  const [state, setState] = useState<'idle' | 'saving' | 'allowed'>('idle');
  const [failure, setFailure] = useState<unknown>();
  const origin = location.origin;
  async function allow() {
    setState('saving');
    setFailure(undefined);
    try {
      const current = await api<SystemSettingsView>('/api/config');
      const origins = current.client?.cors_allowed_origins ?? [];
      if (!origins.includes(origin)) {
        await api('/api/config', {
          method: 'PUT',
          body: { client: { cors_allowed_origins: [...origins, origin] } },
        });
      }
      setState('allowed');
    } catch (error) {
      setFailure(error);
      setState('idle');
    }
  }
  if (state === 'allowed')
    return (
      <p role="status" data-testid="cors-allowed">
        {origin} is allowed: every ingress applies it to its next request. Send again.
      </p>
    );
  return (
    <div className="actions">
      {can('config:write') && (
        <button type="button" className="secondary" onClick={allow} disabled={state === 'saving'}>
          Allow {origin}
        </button>
      )}
      {can('config:read') && <Link to="/config">Open System config (Client section)</Link>}
      <ErrorMessage error={failure} />
    </div>
  );
}
