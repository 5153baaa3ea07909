// A guardrail profile by form: the built-in checks (PII categories as check boxes, patterns as rows, keywords
// one a line, a length limit) or a webhook; Bedrock and Azure profiles take the JSON tab.
import type { GuardrailProfile, GuardrailProfileInput } from '@gw/admin/api-types';
import { useState } from 'react';
import { CheckboxGroup, chosen, linesOf } from '../choice-fields.tsx';
import { Field, Form } from '../ui.tsx';

type Builtin = Extract<GuardrailProfile, { type: 'builtin' }>;
type Pattern = NonNullable<Builtin['pii']>[number];
type PatternRow = NonNullable<Builtin['patterns']>[number];

/** Every PII category the built-in detector knows, with what it finds (a `Record`: a new one fails the typecheck). */
const PII: Record<Pattern, string> = {
  email: 'email addresses',
  phone: 'phone numbers',
  card: 'payment card numbers (Luhn-checked)',
  iban: 'IBANs',
  secret: 'API keys and tokens',
};
const SEVERITIES: PatternRow['severity'][] = ['low', 'medium', 'high'];
const TYPES = ['builtin', 'webhook'] as const;

const blankPattern = (): PatternRow => ({
  name: '',
  regex: '',
  ignore_case: false,
  redact: false,
  severity: 'high',
});

function PatternRows({ initial }: { initial: PatternRow[] }) {
  // Rows keep a stable key while others are removed above them.
  const [rows, setRows] = useState(() => initial.map((row, key) => ({ key, row })));
  const [next, setNext] = useState(initial.length);
  return (
    <fieldset>
      <legend>Patterns</legend>
      {rows.length === 0 && <p className="muted">No patterns.</p>}
      {rows.map(({ key, row }, index) => (
        <div key={key} className="rows" data-testid="pattern-row">
          <Field
            label={`Pattern ${index + 1} name`}
            name={`pattern:${key}:name`}
            defaultValue={row.name}
            required
          />
          <Field
            label={`Pattern ${index + 1} regex`}
            name={`pattern:${key}:regex`}
            defaultValue={row.regex}
            required
            hint="A JavaScript regular expression (unicode)."
          />
          <Field
            label={`Pattern ${index + 1} severity`}
            name={`pattern:${key}:severity`}
            options={SEVERITIES}
            defaultValue={row.severity}
          />
          <label>
            <input type="checkbox" name={`pattern:${key}:ignore_case`} defaultChecked={row.ignore_case} />{' '}
            Ignore case
          </label>
          <label>
            <input type="checkbox" name={`pattern:${key}:redact`} defaultChecked={row.redact} /> Redact under
            a REDACT rule (otherwise it blocks)
          </label>
          <button
            type="button"
            className="secondary"
            onClick={() => setRows(rows.filter((entry) => entry.key !== key))}
          >
            Remove pattern {index + 1}
          </button>
        </div>
      ))}
      <button
        type="button"
        className="secondary"
        onClick={() => {
          setRows([...rows, { key: next, row: blankPattern() }]);
          setNext(next + 1);
        }}
      >
        Add a pattern
      </button>
    </fieldset>
  );
}

/** The pattern rows the form holds, in their order on screen. */
function patternsOf(values: Record<string, string>): PatternRow[] {
  const keys = [
    ...new Set(Object.keys(values).flatMap((name) => /^pattern:(\d+):name$/.exec(name)?.[1] ?? [])),
  ];
  return keys.map((key) => ({
    name: values[`pattern:${key}:name`] ?? '',
    regex: values[`pattern:${key}:regex`] ?? '',
    severity: (values[`pattern:${key}:severity`] ?? 'high') as PatternRow['severity'],
    ignore_case: values[`pattern:${key}:ignore_case`] === 'on',
    redact: values[`pattern:${key}:redact`] === 'on',
  }));
}

export function GuardrailProfileForm(props: {
  item?: GuardrailProfile | undefined;
  submit: (body: unknown) => Promise<void>;
  cancel: () => void;
}) {
  const stored = props.item;
  const [type, setType] = useState<(typeof TYPES)[number] | 'other'>(
    !stored ? 'builtin' : stored.type === 'builtin' || stored.type === 'webhook' ? stored.type : 'other',
  );
  const builtin = stored?.type === 'builtin' ? stored : undefined;
  const webhook = stored?.type === 'webhook' ? stored : undefined;
  return (
    <Form
      label={stored ? `Edit profile ${stored.id}` : 'New guardrail profile'}
      submit={stored ? 'Save profile' : 'Create profile'}
      onCancel={props.cancel}
      onSubmit={(values) => {
        const common = {
          id: stored?.id ?? values.id ?? '',
          enabled: values.enabled !== 'no',
          ...(values.description && { description: values.description }),
        };
        let body: GuardrailProfileInput;
        if (type === 'webhook') {
          // The masked value read back keeps the stored secret (the API's keepMaskedSecrets).
          const secret = values.secret || webhook?.secret;
          body = { ...common, type, url: values.url ?? '', ...(secret && { secret }) };
        } else {
          const pii = chosen(values, 'pii') as Pattern[];
          const patterns = patternsOf(values);
          const keywords = linesOf(values.keywords);
          body = {
            ...common,
            type: 'builtin',
            ...(pii.length > 0 && { pii }),
            ...(patterns.length > 0 && { patterns }),
            ...(keywords.length > 0 && { keywords }),
            ...(values.max_length && { max_length: Number(values.max_length) }),
          };
        }
        return props.submit(body);
      }}
    >
      {!stored && (
        <>
          <div className="field">
            <label htmlFor="profile-type">Type</label>
            <select
              id="profile-type"
              value={type}
              onChange={(event) => setType(event.target.value as (typeof TYPES)[number])}
            >
              <option value="builtin">built in: PII, patterns, keywords, length</option>
              <option value="webhook">webhook: your own service</option>
            </select>
            <small className="muted">
              Bedrock and Azure Content Safety profiles: the Advanced (JSON) tab.
            </small>
          </div>
          <Field label="Id" name="id" required placeholder="pii" />
        </>
      )}
      <Field label="Description" name="description" defaultValue={stored?.description} />
      <Field
        label="Enabled"
        name="enabled"
        options={['yes', 'no']}
        defaultValue={stored?.enabled === false ? 'no' : 'yes'}
        hint="A disabled profile is skipped by every rule that links it."
      />
      {type === 'other' && <p className="muted">This profile's settings are in the Advanced (JSON) tab.</p>}
      {type === 'builtin' && (
        <>
          <CheckboxGroup
            legend="PII categories"
            name="pii"
            checked={builtin?.pii}
            choices={(Object.keys(PII) as Pattern[]).map((category) => ({
              value: category,
              hint: PII[category],
            }))}
          />
          <PatternRows initial={builtin?.patterns ?? []} />
          <Field
            label="Keywords (one a line)"
            name="keywords"
            rows={4}
            defaultValue={(builtin?.keywords ?? []).join('\n')}
            hint="Matched on word boundaries; a match always blocks."
          />
          <Field
            label="Most characters"
            name="max_length"
            type="number"
            unit="characters"
            defaultValue={builtin?.max_length}
          />
        </>
      )}
      {type === 'webhook' && (
        <>
          <Field label="URL" name="url" type="url" required defaultValue={webhook?.url} />
          <Field
            label="Signing secret"
            name="secret"
            type="password"
            hint="The HMAC key of x-gw-signature. Empty keeps the stored one."
          />
        </>
      )}
    </Form>
  );
}
