// A guardrail rule built from choices: when it applies (every request, one key, one team, a model prefix, or a
// CEL condition written out), what it checks (profiles on the input, the output) and what it does. The API
// compiles the condition and refuses one that does not (the error shows next to the field).
import type { GuardrailProfile, GuardrailRule, Team, VirtualKey } from '@gw/admin/api-types';
import { useState } from 'react';
import { Field, Form, useApiQuery } from '../ui.tsx';

const WHEN = ['every request', 'virtual key', 'team', 'model starts with', 'CEL condition'] as const;
type When = (typeof WHEN)[number];

/** The condition as CEL (docs/guardrails.md "Conditions"): a string quoted as CEL quotes it. */
function conditionOf(when: When, value: string): string {
  const quoted = JSON.stringify(value);
  if (when === 'every request') return 'true';
  if (when === 'virtual key') return `virtual_key == ${quoted}`;
  if (when === 'team') return `team == ${quoted}`;
  if (when === 'model starts with') return `model.startsWith(${quoted})`;
  return value;
}

function ProfileChoices({
  side,
  ids,
  chosen,
}: {
  side: 'input' | 'output';
  ids: string[];
  chosen: string[];
}) {
  return (
    <fieldset>
      <legend>Check the {side} with</legend>
      {ids.length === 0 && <p className="muted">No profiles yet: add one above.</p>}
      {ids.map((id) => (
        <label key={id}>
          <input type="checkbox" name={`${side}:${id}`} defaultChecked={chosen.includes(id)} /> {id}{' '}
        </label>
      ))}
    </fieldset>
  );
}

export function GuardrailRuleForm(props: {
  item?: GuardrailRule | undefined;
  submit: (body: unknown) => Promise<void>;
  cancel: () => void;
}) {
  const profiles = useApiQuery<GuardrailProfile[]>('/api/guardrails/profiles');
  const keys = useApiQuery<VirtualKey[]>('/api/governance/virtual-keys');
  const teams = useApiQuery<Team[]>('/api/governance/teams');
  const [when, setWhen] = useState<When>(props.item ? 'CEL condition' : 'every request');
  const ids = (profiles.data ?? []).map((profile) => profile.id);
  const suggestions =
    when === 'virtual key'
      ? (keys.data ?? []).map((key) => key.name)
      : when === 'team'
        ? (teams.data ?? []).map((team) => ({ value: team.id, label: team.name }))
        : undefined;
  return (
    <Form
      label={props.item ? `Edit rule ${props.item.id}` : 'New guardrail rule'}
      submit={props.item ? 'Save rule' : 'Create rule'}
      onCancel={props.cancel}
      fieldNames={{ condition: 'value' }}
      onSubmit={(values) =>
        props.submit({
          ...props.item,
          id: props.item?.id ?? values.id,
          condition: conditionOf(when, values.value ?? ''),
          action: values.action,
          input_profiles: ids.filter((id) => values[`input:${id}`]),
          output_profiles: ids.filter((id) => values[`output:${id}`]),
        })
      }
    >
      {!props.item && <Field label="Rule id" name="id" required placeholder="redact-email" />}
      <div className="field">
        <label htmlFor="rule-when">Applies to</label>
        <select id="rule-when" value={when} onChange={(event) => setWhen(event.target.value as When)}>
          {WHEN.map((name) => (
            <option key={name}>{name}</option>
          ))}
        </select>
      </div>
      {when !== 'every request' && (
        <Field
          key={when}
          label={when === 'CEL condition' ? 'Condition (CEL)' : `Which ${when}`}
          name="value"
          required
          defaultValue={when === 'CEL condition' ? props.item?.condition : undefined}
          suggestions={suggestions}
          hint={
            when === 'CEL condition' ? 'Variables: model, provider, virtual_key, team, headers…' : undefined
          }
        />
      )}
      <Field label="Action" name="action" options={['BLOCK', 'REDACT']} defaultValue={props.item?.action} />
      <ProfileChoices side="input" ids={ids} chosen={props.item?.input_profiles ?? []} />
      <ProfileChoices side="output" ids={ids} chosen={props.item?.output_profiles ?? []} />
    </Form>
  );
}
