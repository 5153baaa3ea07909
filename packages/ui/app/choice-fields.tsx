// Choices as check boxes and lists as rows: what the forms of alert rules, guardrail profiles, users and roles
// share. A box is named `<group>:<value>` (FormData keeps one value per name), read back with `chosen`.
import type { ReactNode } from 'react';

export interface Choice {
  value: string;
  label?: string;
  /** What choosing it means, read with the box. */
  hint?: ReactNode;
}

export function CheckboxGroup(props: {
  legend: string;
  name: string;
  choices: Choice[];
  checked?: readonly string[] | undefined;
  hint?: string;
}) {
  return (
    <fieldset className="choices">
      <legend>{props.legend}</legend>
      {props.hint && <p className="muted">{props.hint}</p>}
      {props.choices.map((choice) => (
        <label key={choice.value} className="choice">
          <input
            type="checkbox"
            name={`${props.name}:${choice.value}`}
            defaultChecked={props.checked?.includes(choice.value)}
          />{' '}
          {choice.label ?? choice.value}
          {choice.hint && <small className="muted"> — {choice.hint}</small>}
        </label>
      ))}
    </fieldset>
  );
}

/** The values of a group's boxes that are checked. */
export function chosen(values: Record<string, string>, name: string): string[] {
  const prefix = `${name}:`;
  return Object.entries(values)
    .filter(([field, value]) => field.startsWith(prefix) && value === 'on')
    .map(([field]) => field.slice(prefix.length));
}

/** One entry a line, blank lines dropped. */
export const linesOf = (text: string | undefined) =>
  (text ?? '')
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean);
