// A change as the audit log holds it (the resource before and after, secrets redacted), shown as what changed:
// each field that differs, by its path, with its value before and after.
import { display } from '../format.ts';

type Flat = Map<string, unknown>;

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Every leaf of a JSON value by its path (`keys[0].weight`); lists of plain values stay one leaf. */
function flatten(value: unknown, path = '', into: Flat = new Map()): Flat {
  if (isObject(value)) {
    for (const [name, inner] of Object.entries(value)) flatten(inner, path ? `${path}.${name}` : name, into);
  } else if (Array.isArray(value) && value.some((item) => typeof item === 'object' && item !== null)) {
    value.forEach((item, index) => {
      flatten(item, `${path}[${index}]`, into);
    });
  } else {
    into.set(path, value);
  }
  return into;
}

interface FieldChange {
  path: string;
  before: unknown;
  after: unknown;
}

/** The fields that differ between two states, in the order they appear (a created or deleted resource: all). */
function changesOf(before: unknown, after: unknown): FieldChange[] {
  const old = flatten(before ?? {});
  const next = flatten(after ?? {});
  const paths = [...new Set([...old.keys(), ...next.keys()])];
  return paths
    .map((path) => ({ path, before: old.get(path), after: next.get(path) }))
    .filter((change) => JSON.stringify(change.before) !== JSON.stringify(change.after));
}

export function AuditDiff({ before, after }: { before: unknown; after: unknown }) {
  const changes = changesOf(before, after);
  if (changes.length === 0) return <p className="muted">No field changed.</p>;
  return (
    <table className="diff" data-testid="audit-diff">
      <caption className="sr-only">What changed</caption>
      <thead>
        <tr>
          <th scope="col">Field</th>
          <th scope="col">Before</th>
          <th scope="col">After</th>
        </tr>
      </thead>
      <tbody>
        {changes.map((change) => (
          <tr key={change.path}>
            <td data-label="Field">
              <code>{change.path || '(whole)'}</code>
            </td>
            <td data-label="Before" className="diff-before">
              {change.before === undefined ? '—' : display(change.before)}
            </td>
            <td data-label="After" className="diff-after">
              {change.after === undefined ? '—' : display(change.after)}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
