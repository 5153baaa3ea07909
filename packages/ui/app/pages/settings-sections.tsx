// The system settings as one form per section (client, governance, MCP, logs, cache), its fields made from the values
// the API answers: a switch for a yes/no, a number, a text, a comma-separated list. A save sends only the
// fields that changed; nested objects stay in the JSON tab.
import type { SystemSettingsView } from '@gw/admin/api-types';
import { Field, Form, listOf } from '../ui.tsx';

const SECTIONS = [
  { path: ['client'], title: 'Client' },
  { path: ['governance', 'settings'], title: 'Governance' },
  { path: ['mcp'], title: 'MCP tool calls' },
  { path: ['logs'], title: 'Request logs' },
  { path: ['cache'], title: 'Response cache' },
] as const;

const label = (name: string) => name.replace(/_/g, ' ').replace(/^./, (first) => first.toUpperCase());

function sectionOf(settings: SystemSettingsView, path: readonly string[]): Record<string, unknown> {
  let value: unknown = settings;
  for (const part of path) value = (value as Record<string, unknown> | undefined)?.[part];
  return (value ?? {}) as Record<string, unknown>;
}

/** The fields a form can hold: booleans, numbers, strings and lists of strings. */
function editable(section: Record<string, unknown>) {
  return Object.entries(section).filter(
    ([, value]) =>
      ['boolean', 'number', 'string'].includes(typeof value) ||
      (Array.isArray(value) && value.every((item) => typeof item === 'string')),
  );
}

/** What the form holds, typed back as the stored values are; only the fields that differ. */
function changes(section: Record<string, unknown>, values: Record<string, string>) {
  const changed: Record<string, unknown> = {};
  for (const [name, current] of editable(section)) {
    const text = values[name] ?? '';
    const next =
      typeof current === 'boolean'
        ? text === 'yes'
        : typeof current === 'number'
          ? Number(text)
          : Array.isArray(current)
            ? listOf(text)
            : text;
    if (JSON.stringify(next) !== JSON.stringify(current)) changed[name] = next;
  }
  return changed;
}

export function SettingsSections(props: {
  settings: SystemSettingsView;
  save: (body: unknown) => Promise<unknown>;
}) {
  const restart = new Set<string>(props.settings.restart_required ?? []);
  return (
    <>
      {SECTIONS.map(({ path, title }) => {
        const section = sectionOf(props.settings, path);
        return (
          <Form
            key={title}
            label={title}
            submit={`Save ${title.toLowerCase()}`}
            onSubmit={async (values) => {
              const changed = changes(section, values);
              if (Object.keys(changed).length === 0) return;
              // Turning allow_anonymous_admin on is confirmed by api.ts, whichever form saves it.
              const body = path.reduceRight<unknown>((inner, part) => ({ [part]: inner }), changed);
              await props.save(body);
            }}
          >
            {editable(section).map(([name, value]) => (
              <Field
                key={name}
                label={label(name)}
                name={name}
                type={typeof value === 'number' ? 'number' : 'text'}
                defaultValue={
                  typeof value === 'boolean'
                    ? value
                      ? 'yes'
                      : 'no'
                    : Array.isArray(value)
                      ? value.join(', ')
                      : (value as string | number)
                }
                options={typeof value === 'boolean' ? ['yes', 'no'] : undefined}
                hint={restart.has([...path, name].join('.')) ? 'Applies at the next start.' : undefined}
              />
            ))}
          </Form>
        );
      })}
    </>
  );
}
