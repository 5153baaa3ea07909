import { CrudSection } from '../crud.tsx';
import { display } from '../format.ts';
import { PageHeader } from '../ui.tsx';

export default function Guardrails() {
  return (
    <>
      <PageHeader title="Guardrails" />
      <p className="muted">
        Profiles say what to detect; rules say when and what to do (docs/guardrails.md).
      </p>
      <CrudSection
        title="Profiles"
        listPath="/api/guardrails/profiles"
        itemPath={(id) => `/api/guardrails/profiles/${encodeURIComponent(id)}`}
        writePermission="guardrails:write"
        editMethod="PUT"
        createTemplate={{ id: 'pii', type: 'builtin', pii: ['email'] }}
        columns={[
          { header: 'Id', cell: (item) => display(item.id) },
          { header: 'Type', cell: (item) => display(item.type) },
          {
            header: 'Settings',
            cell: (item) => (
              <code className="wrap">{display({ ...item, id: undefined, type: undefined })}</code>
            ),
          },
        ]}
      />
      <CrudSection
        title="Rules"
        listPath="/api/guardrails/rules"
        itemPath={(id) => `/api/guardrails/rules/${encodeURIComponent(id)}`}
        writePermission="guardrails:write"
        editMethod="PUT"
        createTemplate={{ id: 'redact-email', condition: 'true', action: 'REDACT', input_profiles: ['pii'] }}
        columns={[
          { header: 'Id', cell: (item) => display(item.id) },
          { header: 'Condition', cell: (item) => <code>{display(item.condition)}</code> },
          { header: 'Action', cell: (item) => display(item.action) },
          { header: 'Input profiles', cell: (item) => display(item.input_profiles) },
          { header: 'Output profiles', cell: (item) => display(item.output_profiles) },
        ]}
      />
    </>
  );
}
