import type { McpClient, McpClientEdit } from '@gw/admin/api-types';
import { useState } from 'react';
import { api } from '../api.ts';
import { useAuth } from '../auth.tsx';
import { CrudSection } from '../crud.tsx';
import { display } from '../format.ts';
import { Field, Form, PageHeader, useApiMutation } from '../ui.tsx';

const split = (text: string | undefined, by: RegExp) =>
  (text ?? '')
    .split(by)
    .map((part) => part.trim())
    .filter(Boolean);

function AddClient({ onDone }: { onDone: () => void }) {
  // A stdio client runs a command on the runners: the API takes one from Admin alone, so no one else is offered it.
  const stdio = useAuth().identity?.role === 'admin';
  const add = useApiMutation(
    (body: unknown) => api('/api/mcp/client', { method: 'POST', body }),
    ['/api/mcp'],
  );
  return (
    <Form
      label="Add an MCP client"
      submit="Add client"
      onCancel={onDone}
      onSubmit={async (values) => {
        const type = values.connection_type;
        const allowed = split(values.tools_to_execute, /,/);
        await add.mutateAsync({
          name: values.name,
          connection_type: type,
          ...(type === 'stdio'
            ? { stdio_config: { command: values.command, args: split(values.args, /\s+/) } }
            : { connection_string: values.connection_string }),
          ...(allowed.length > 0 && { tools_to_execute: allowed }),
        });
        onDone();
      }}
    >
      <Field label="Name" name="name" required hint="Letters, digits, _ or -; prefixes its tools." />
      <Field
        label="Connection type"
        name="connection_type"
        options={stdio ? ['http', 'sse', 'stdio'] : ['http', 'sse']}
        defaultValue="http"
      />
      <Field
        label="URL (http or sse)"
        name="connection_string"
        type="url"
        placeholder="https://mcp.example.com/mcp"
      />
      {stdio && (
        <>
          <Field label="Command (stdio)" name="command" placeholder="node" />
          <Field label="Arguments (stdio, space-separated)" name="args" />
        </>
      )}
      <Field label="Allowed tools (comma-separated)" name="tools_to_execute" hint="Empty: every tool." />
    </Form>
  );
}

export default function Mcp() {
  const { can } = useAuth();
  const [adding, setAdding] = useState(false);
  const reconnect = useApiMutation(
    (name: string) => api(`/api/mcp/client/${encodeURIComponent(name)}/reconnect`, { method: 'POST' }),
    ['/api/mcp'],
  );
  return (
    <>
      <PageHeader title="MCP clients">
        {can('mcp:write') && !adding && (
          <button type="button" onClick={() => setAdding(true)}>
            Add MCP client
          </button>
        )}
      </PageHeader>
      {adding && <AddClient onDone={() => setAdding(false)} />}
      {reconnect.error && (
        <p className="error" role="alert">
          {reconnect.error.message}
        </p>
      )}
      <CrudSection<McpClient>
        title="Clients"
        listPath="/api/mcp/clients"
        itemPath={(name) => `/api/mcp/client/${encodeURIComponent(name)}`}
        idOf={(client) => client.name}
        writePermission="mcp:write"
        editMethod="PATCH"
        editBody={({ config }) =>
          ({
            tools_to_execute: config.tools_to_execute ?? null,
            tools_to_skip: config.tools_to_skip ?? null,
            tools_to_auto_execute: config.tools_to_auto_execute ?? null,
            allow_by_default: config.allow_by_default,
          }) satisfies McpClientEdit
        }
        columns={[
          { header: 'Name', cell: (client) => client.name },
          {
            header: 'Connection',
            cell: ({ config }) =>
              `${config.connection_type} ${config.connection_string ?? config.stdio_config?.command ?? ''}`,
          },
          {
            header: 'State',
            cell: (client) => (
              <span className={`state state-${client.state}`} title={client.error}>
                {client.state}
                {client.error ? `: ${client.error}` : ''}
              </span>
            ),
          },
          { header: 'Tools', cell: (client) => client.tools.join(', ') || '—' },
          {
            header: 'Filters',
            cell: ({ config }) =>
              `allow ${display(config.tools_to_execute ?? '*')}; skip ${display(config.tools_to_skip ?? [])}`,
          },
        ]}
        rowActions={(client) =>
          can('mcp:write') && (
            <button type="button" className="secondary" onClick={() => reconnect.mutate(client.name)}>
              Reconnect<span className="sr-only"> {client.name}</span>
            </button>
          )
        }
      />
    </>
  );
}
