// An alert channel by its type: the fields each type takes (docs/alerts.md), nothing else. An edit sends
// only what was typed, so a secret left empty stays as stored.
import type { AlertChannel } from '@gw/admin/api-types';
import { useState } from 'react';
import { Field, Form, listOf } from '../ui.tsx';

type ChannelType = AlertChannel['type'];

const TYPES: ChannelType[] = ['webhook', 'slack', 'pagerduty', 'email'];

function TypeFields({ type, channel }: { type: ChannelType; channel?: AlertChannel | undefined }) {
  // Each type has its own fields: read by name, whichever type the stored channel is.
  const fields: Record<string, unknown> = channel ?? {};
  const text = (name: string) => (typeof fields[name] === 'string' ? String(fields[name]) : undefined);
  if (type === 'webhook')
    return (
      <>
        <Field label="URL" name="url" type="url" required={!channel} defaultValue={text('url')} />
        <Field
          label="Signing secret"
          name="secret"
          type="password"
          required={!channel}
          hint="16 characters or more; receivers check the x-gw-signature with it. Empty keeps the stored one."
        />
      </>
    );
  if (type === 'slack')
    return (
      <Field
        label="Incoming webhook URL"
        name="url"
        type="url"
        required={!channel}
        defaultValue={text('url')}
      />
    );
  if (type === 'pagerduty')
    return (
      <Field
        label="Routing key"
        name="routing_key"
        type="password"
        required={!channel}
        hint="The Events API v2 integration key. Empty keeps the stored one."
      />
    );
  return (
    <>
      <Field label="SMTP host" name="host" required={!channel} defaultValue={text('host')} />
      <Field
        label="SMTP port"
        name="port"
        type="number"
        defaultValue={typeof fields.port === 'number' ? fields.port : 587}
      />
      <Field label="Username" name="username" defaultValue={text('username')} />
      <Field label="Password" name="password" type="password" hint="Empty keeps the stored one." />
      <Field label="From" name="from" type="email" required={!channel} defaultValue={text('from')} />
      <Field
        label="To (comma-separated)"
        name="to"
        required={!channel}
        defaultValue={Array.isArray(fields.to) ? fields.to.join(', ') : undefined}
      />
    </>
  );
}

/** The typed fields as the API takes them: numbers and lists converted, empty ones left out. */
function bodyOf(values: Record<string, string>): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(values)) {
    if (value === '' || name === 'kind') continue;
    body[name] = name === 'port' ? Number(value) : name === 'to' ? listOf(value) : value;
  }
  return body;
}

export function AlertChannelForm(props: {
  item?: AlertChannel | undefined;
  submit: (body: unknown) => Promise<void>;
  cancel: () => void;
}) {
  const [type, setType] = useState<ChannelType>(props.item?.type ?? 'webhook');
  return (
    <Form
      label={props.item ? `Edit channel ${props.item.id}` : 'New alert channel'}
      submit={props.item ? 'Save channel' : 'Create channel'}
      onCancel={props.cancel}
      onSubmit={(values) => {
        const { id, ...rest } = bodyOf(values);
        return props.submit(props.item ? rest : { id, type, ...rest });
      }}
    >
      {!props.item && (
        <>
          <div className="field">
            <label htmlFor="channel-type">Type</label>
            <select
              id="channel-type"
              name="kind"
              value={type}
              onChange={(event) => setType(event.target.value as ChannelType)}
            >
              {TYPES.map((name) => (
                <option key={name}>{name}</option>
              ))}
            </select>
          </div>
          <Field label="Id" name="id" required placeholder="ops" />
        </>
      )}
      <Field label="Name" name="name" defaultValue={props.item?.name} />
      <TypeFields key={type} type={type} channel={props.item} />
    </Form>
  );
}
