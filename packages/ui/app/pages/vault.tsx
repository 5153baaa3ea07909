// Secret-manager references (vault.…, aws-sm.…): whether each has a value, its last read and last error, and
// a refresh that reads them all again on every process. Never a value.
import type { VaultSecrets } from '@gw/admin/api-types';
import { api } from '../api.ts';
import { useAuth } from '../auth.tsx';
import { display, formatTime } from '../format.ts';
import { ErrorMessage, PageHeader, QueryView, State, Table, useApiMutation, useApiQuery } from '../ui.tsx';

const PATH = '/api/vault/secrets';

export default function Vault() {
  const { can } = useAuth();
  const secrets = useApiQuery<VaultSecrets>(PATH);
  const refresh = useApiMutation(() => api('/api/vault/refresh', { method: 'POST' }), [PATH]);
  return (
    <>
      <PageHeader title="Vault">
        {can('vault:write') && (
          <button type="button" onClick={() => refresh.mutate(undefined)} disabled={refresh.isPending}>
            {refresh.isPending ? 'Refreshing…' : 'Refresh secrets'}
          </button>
        )}
      </PageHeader>
      <p className="muted">
        Provider keys and other credentials written as references (vault.…, aws-sm.…, gcp-sm.…, azure-kv.…)
        are read by gw itself; a refresh reads them again now on every process.
      </p>
      <ErrorMessage error={refresh.error} />
      <QueryView query={secrets}>
        {(body) => (
          <Table
            caption="Secret references"
            rows={body.secrets}
            rowKey={(secret) => secret.reference}
            empty="No secret-manager references in use: every credential is stored as its value."
            columns={[
              { header: 'Reference', cell: (secret) => <code>{secret.reference}</code> },
              { header: 'Backend', cell: (secret) => secret.backend },
              { header: 'State', cell: (secret) => <State state={secret.resolved ? 'healthy' : 'failed'} /> },
              { header: 'Last read', cell: (secret) => formatTime(secret.last_success_at) },
              {
                header: 'Last error',
                cell: (secret) =>
                  secret.last_error
                    ? `${secret.last_error} (${formatTime(secret.last_error_at)})`
                    : display(null),
              },
            ]}
          />
        )}
      </QueryView>
    </>
  );
}
