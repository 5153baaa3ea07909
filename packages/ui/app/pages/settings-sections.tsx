// The system settings as one form per section (client, governance, MCP, logs, cache), each field as the schema
// declares it (`GET /api/config/fields`): its description, unit, default, whether a change applies to the next
// request or at the next start; a yes/no, a number, a text, a list, check boxes for fixed choices. A save sends
// only the fields that changed (an optional text emptied is unset); objects stay in the JSON tab.
import type { SettingField, SystemSettingsView } from '@gw/admin/api-types';
import { CheckboxGroup, chosen } from '../choice-fields.tsx';
import { display } from '../format.ts';
import { Field, Form, listOf, QueryView, useApiQuery } from '../ui.tsx';

const TITLES: Record<SettingField['section'], string> = {
  client: 'Client',
  'governance.settings': 'Governance',
  mcp: 'MCP tool calls',
  logs: 'Request logs',
  cache: 'Response cache',
};

const label = (name: string) => name.replace(/_/g, ' ').replace(/^./, (first) => first.toUpperCase());

function sectionOf(settings: SystemSettingsView, section: SettingField['section']): Record<string, unknown> {
  let value: unknown = settings;
  for (const part of section.split('.')) value = (value as Record<string, unknown> | undefined)?.[part];
  return (value ?? {}) as Record<string, unknown>;
}

/** What the form holds for a field, typed back as the API takes it. */
function formValue(field: SettingField, values: Record<string, string>): unknown {
  const text = values[field.name] ?? '';
  switch (field.kind) {
    case 'boolean':
      return text === 'yes';
    case 'number':
      return text === '' ? null : Number(text);
    case 'list':
      return listOf(text);
    case 'choices':
      return chosen(values, field.name);
    default:
      return text === '' ? null : text;
  }
}

/** Only the fields that differ from what is stored; an emptied optional one is sent as null (unset). */
function changes(fields: SettingField[], section: Record<string, unknown>, values: Record<string, string>) {
  const changed: Record<string, unknown> = {};
  for (const field of fields) {
    if (field.kind === 'object') continue;
    const next = formValue(field, values);
    const current = section[field.name];
    if (next === null && current === undefined) continue;
    if (JSON.stringify(next) !== JSON.stringify(current)) changed[field.name] = next;
  }
  return changed;
}

/** The field's hint: what it does, its default, and when a change applies. */
function hintOf(field: SettingField): string {
  const shown = field.default === undefined ? undefined : display(field.default);
  return [
    field.description,
    shown === undefined ? (field.optional ? 'Unset by default.' : undefined) : `Default: ${shown}.`,
    field.applies === 'restart' ? 'Applies at the next start.' : 'Applies to the next request.',
  ]
    .filter(Boolean)
    .join(' ');
}

function SettingInput({ field, value }: { field: SettingField; value: unknown }) {
  const common = { label: label(field.name), name: field.name, hint: hintOf(field) };
  if (field.kind === 'boolean')
    return <Field {...common} options={['yes', 'no']} defaultValue={value ? 'yes' : 'no'} />;
  if (field.kind === 'choices')
    return (
      <CheckboxGroup
        legend={common.label}
        name={field.name}
        hint={common.hint}
        checked={Array.isArray(value) ? value.map(String) : []}
        choices={(field.options ?? []).map((option) => ({ value: option }))}
      />
    );
  if (field.kind === 'object')
    return (
      <div className="field">
        <strong>{common.label}</strong>
        <code className="wrap">{display(value)}</code>
        <small className="muted">{common.hint} Changed in the Advanced (JSON) tab.</small>
      </div>
    );
  return (
    <Field
      {...common}
      type={field.kind === 'number' ? 'number' : 'text'}
      unit={field.unit}
      defaultValue={Array.isArray(value) ? value.join(', ') : (value as string | number | undefined)}
      placeholder={field.kind === 'list' ? 'comma-separated' : undefined}
    />
  );
}

export function SettingsSections(props: {
  settings: SystemSettingsView;
  save: (body: unknown) => Promise<unknown>;
}) {
  const fields = useApiQuery<SettingField[]>('/api/config/fields', { staleTime: Number.POSITIVE_INFINITY });
  return (
    <QueryView query={fields}>
      {(all) =>
        (Object.keys(TITLES) as SettingField['section'][]).map((name) => {
          const title = TITLES[name];
          const section = sectionOf(props.settings, name);
          const own = all.filter((field) => field.section === name);
          return (
            <Form
              key={name}
              label={title}
              submit={`Save ${title.toLowerCase()}`}
              onSubmit={async (values) => {
                const changed = changes(own, section, values);
                if (Object.keys(changed).length === 0) return;
                // Turning allow_anonymous_admin on is confirmed by api.ts, whichever form saves it.
                const body = name
                  .split('.')
                  .reduceRight<unknown>((inner, part) => ({ [part]: inner }), changed);
                await props.save(body);
              }}
            >
              {own.map((field) => (
                <SettingInput key={field.name} field={field} value={section[field.name]} />
              ))}
            </Form>
          );
        })
      }
    </QueryView>
  );
}
