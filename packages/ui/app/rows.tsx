// A list edited as rows of a form (a rule's targets, its fallbacks, a key's metadata): rows are added and removed
// in place, and their inputs are plain named fields, so the form's values carry them and `readRows` reads them
// back in the order shown.
import { useId, useState } from 'react';

/** One input of a row: `name` is the row's field, `label` what it reads as (with the row's number). */
export interface RowField {
  name: string;
  label: string;
  type?: 'text' | 'number';
  placeholder?: string;
  /** Values to pick from while still typing any (providers by name). */
  suggestions?: string[];
}

/** Each input is named `<list>:<row>:<field>`: the row a counter, so a removed row leaves no gap in the others. */
const inputName = (list: string, row: number, field: string) => `${list}:${row}:${field}`;

export function Rows(props: {
  /** The list's name in the form's values (what `readRows` is given). */
  name: string;
  legend: string;
  fields: RowField[];
  initial: Array<Record<string, string>>;
  /** The add button's text: "Add target". */
  add: string;
  hint?: string;
}) {
  const listId = useId();
  const [rows, setRows] = useState(() => props.initial.map((values, index) => ({ key: index, values })));
  const [next, setNext] = useState(props.initial.length);
  return (
    <fieldset className="rows">
      <legend>{props.legend}</legend>
      {props.hint && <small className="muted">{props.hint}</small>}
      {rows.map((row, index) => (
        <div key={row.key} className="row" data-testid={`${props.name}-row`}>
          {props.fields.map((field) => (
            <input
              key={field.name}
              name={inputName(props.name, row.key, field.name)}
              aria-label={`${field.label} ${index + 1}`}
              type={field.type ?? 'text'}
              step={field.type === 'number' ? 'any' : undefined}
              placeholder={field.placeholder}
              defaultValue={row.values[field.name]}
              list={field.suggestions ? `${listId}-${field.name}` : undefined}
              autoComplete="off"
            />
          ))}
          <button
            type="button"
            className="secondary"
            aria-label={`Remove ${props.legend} row ${index + 1}`}
            onClick={() => setRows(rows.filter((other) => other.key !== row.key))}
          >
            Remove
          </button>
        </div>
      ))}
      {props.fields
        .filter((field) => field.suggestions)
        .map((field) => (
          <datalist key={field.name} id={`${listId}-${field.name}`}>
            {field.suggestions!.map((value) => (
              <option key={value} value={value} />
            ))}
          </datalist>
        ))}
      <div className="actions">
        <button
          type="button"
          className="secondary"
          onClick={() => {
            setRows([...rows, { key: next, values: {} }]);
            setNext(next + 1);
          }}
        >
          {props.add}
        </button>
      </div>
    </fieldset>
  );
}

/** The rows of a list as the form's values hold them, in order; a row left wholly empty is dropped. */
export function readRows(values: Record<string, string>, list: string): Array<Record<string, string>> {
  const rows = new Map<string, Record<string, string>>();
  for (const [name, value] of Object.entries(values)) {
    const [owner, row, field] = name.split(':');
    if (owner !== list || row === undefined || field === undefined) continue;
    const entry = rows.get(row) ?? {};
    entry[field] = value.trim();
    rows.set(row, entry);
  }
  return [...rows.values()].filter((row) => Object.values(row).some(Boolean));
}
