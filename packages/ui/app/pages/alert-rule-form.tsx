// An alert rule by its kind: the fields each kind takes (docs/alerts.md), the channels as check boxes, rates
// in percent and windows in minutes (the API's fractions and milliseconds are made here).
import type { AlertChannel, AlertRule, AlertRuleInput } from '@gw/admin/api-types';
import { useState } from 'react';
import { CheckboxGroup, chosen } from '../choice-fields.tsx';
import { Field, Form, listOf, useApiQuery } from '../ui.tsx';

type Kind = AlertRule['kind'];
type RuleOf<K extends Kind> = Extract<AlertRule, { kind: K }>;

/** Every kind with what it watches: a `Record` over the API's kinds, so a new kind fails the typecheck here. */
const KINDS: Record<Kind, string> = {
  error_rate: 'the share of requests that fail',
  latency: 'a latency percentile',
  budget_threshold: 'a budget reaching a share of its limit',
  provider_health: 'a provider degraded or failed',
  guardrail_blocks: 'requests a guardrail refused',
  dropped_requests: 'requests dropped for overload',
  secret_failure: 'a secret reference that cannot be read',
};
const SEVERITIES: RuleOf<'error_rate'>['severity'][] = ['info', 'warning', 'error', 'critical'];
const LEVELS: NonNullable<RuleOf<'budget_threshold'>['levels']> = [
  'virtual_key',
  'team',
  'customer',
  'user',
  'business_unit',
  'provider_config',
];
const STATES: RuleOf<'provider_health'>['states'] = ['degraded', 'failed', 'recovering'];
const PERCENTILES: RuleOf<'latency'>['percentile'][] = ['p50', 'p95', 'p99'];

const MINUTE = 60_000;
const minutes = (ms: number | undefined) => (ms === undefined ? undefined : ms / MINUTE);
const number = (text: string | undefined) => (text ? Number(text) : undefined);

/** The fields of one kind, from a stored rule of that kind or empty. */
function KindFields({ kind, rule }: { kind: Kind; rule: Partial<Record<string, unknown>> }) {
  const value = (name: string) => rule[name] as number | string | undefined;
  const windowed = kind === 'error_rate' || kind === 'latency' || kind === 'guardrail_blocks';
  return (
    <>
      {kind === 'error_rate' && (
        <Field
          label="Threshold"
          name="threshold_percent"
          type="number"
          unit="% of requests"
          required
          defaultValue={typeof rule.threshold === 'number' ? rule.threshold * 100 : 10}
        />
      )}
      {kind === 'latency' && (
        <>
          <Field
            label="Percentile"
            name="percentile"
            options={PERCENTILES}
            defaultValue={value('percentile') ?? 'p95'}
          />
          <Field
            label="Threshold"
            name="threshold_ms"
            type="number"
            unit="ms"
            required
            defaultValue={value('threshold_ms')}
          />
        </>
      )}
      {(kind === 'guardrail_blocks' || kind === 'dropped_requests') && (
        <Field
          label="Threshold"
          name="threshold"
          type="number"
          unit="requests in the window"
          required
          defaultValue={value('threshold')}
        />
      )}
      {(windowed || kind === 'dropped_requests') && (
        <Field
          label="Window"
          name="window_minutes"
          type="number"
          unit="minutes"
          defaultValue={minutes(rule.window_ms as number | undefined) ?? 5}
        />
      )}
      {(kind === 'error_rate' || kind === 'latency') && (
        <Field
          label="Fewest requests"
          name="min_requests"
          type="number"
          unit="requests"
          defaultValue={value('min_requests') ?? 20}
          hint="Below this many requests in the window the rule stays quiet."
        />
      )}
      {windowed && (
        <>
          <Field label="Only provider" name="provider" defaultValue={value('provider')} />
          <Field label="Only model" name="model" defaultValue={value('model')} />
        </>
      )}
      {kind === 'budget_threshold' && (
        <>
          <Field
            label="Thresholds (comma-separated)"
            name="thresholds"
            unit="% of the limit"
            defaultValue={((rule.thresholds as number[] | undefined) ?? [50, 80, 100]).join(', ')}
          />
          <CheckboxGroup
            legend="Budget levels"
            name="level"
            hint="None checked: every level."
            checked={rule.levels as string[] | undefined}
            choices={LEVELS.map((level) => ({ value: level, label: level.replace(/_/g, ' ') }))}
          />
        </>
      )}
      {kind === 'provider_health' && (
        <>
          <CheckboxGroup
            legend="States that fire"
            name="state"
            checked={(rule.states as string[] | undefined) ?? ['degraded', 'failed']}
            choices={STATES.map((state) => ({ value: state }))}
          />
          <Field
            label="Only providers (comma-separated)"
            name="providers"
            defaultValue={((rule.providers as string[] | undefined) ?? []).join(', ')}
          />
        </>
      )}
      {kind === 'dropped_requests' && (
        <Field
          label="Only reasons (comma-separated)"
          name="reasons"
          defaultValue={((rule.reasons as string[] | undefined) ?? []).join(', ')}
        />
      )}
      {kind === 'secret_failure' && (
        <Field
          label="Only references containing (comma-separated)"
          name="references"
          defaultValue={((rule.references as string[] | undefined) ?? []).join(', ')}
        />
      )}
    </>
  );
}

/** The kind's fields as the API takes them: units converted, empty ones left out. */
function kindBody(kind: Kind, values: Record<string, string>): Record<string, unknown> {
  const list = (name: string) => (listOf(values[name]).length ? listOf(values[name]) : undefined);
  const fields: Record<string, unknown> = {
    threshold: kind === 'error_rate' ? number(values.threshold_percent)! / 100 : number(values.threshold),
    threshold_ms: number(values.threshold_ms),
    percentile: values.percentile,
    window_ms: values.window_minutes ? Number(values.window_minutes) * MINUTE : undefined,
    min_requests: number(values.min_requests),
    provider: values.provider || undefined,
    model: values.model || undefined,
    thresholds: kind === 'budget_threshold' ? listOf(values.thresholds).map(Number) : undefined,
    levels:
      kind === 'budget_threshold' && chosen(values, 'level').length ? chosen(values, 'level') : undefined,
    states: kind === 'provider_health' ? chosen(values, 'state') : undefined,
    providers: list('providers'),
    reasons: list('reasons'),
    references: list('references'),
  };
  return Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined));
}

export function AlertRuleForm(props: {
  item?: AlertRule | undefined;
  submit: (body: unknown) => Promise<void>;
  cancel: () => void;
}) {
  const channels = useApiQuery<AlertChannel[]>('/api/alerts/channels');
  const [kind, setKind] = useState<Kind>(props.item?.kind ?? 'error_rate');
  const rule = (props.item ?? {}) as Partial<Record<string, unknown>>;
  return (
    <Form
      label={props.item ? `Edit rule ${props.item.id}` : 'New alert rule'}
      submit={props.item ? 'Save rule' : 'Create rule'}
      onCancel={props.cancel}
      onSubmit={(values) => {
        const common = {
          ...(values.name && { name: values.name }),
          channels: chosen(values, 'channel'),
          severity: values.severity as RuleOf<'error_rate'>['severity'],
          cooldown_ms: Number(values.cooldown_minutes || 15) * MINUTE,
          notify_resolved: values.notify_resolved === 'yes',
        };
        const fields = kindBody(kind, values);
        if (props.item) return props.submit({ ...common, ...fields });
        return props.submit({ id: values.id, kind, ...common, ...fields } as AlertRuleInput);
      }}
    >
      {!props.item && (
        <>
          <div className="field">
            <label htmlFor="rule-kind">Kind</label>
            <select id="rule-kind" value={kind} onChange={(event) => setKind(event.target.value as Kind)}>
              {(Object.keys(KINDS) as Kind[]).map((name) => (
                <option key={name} value={name}>
                  {name.replace(/_/g, ' ')}: {KINDS[name]}
                </option>
              ))}
            </select>
          </div>
          <Field label="Id" name="id" required placeholder="errors" />
        </>
      )}
      <Field label="Name" name="name" defaultValue={rule.name as string | undefined} />
      <KindFields key={kind} kind={kind} rule={rule} />
      <CheckboxGroup
        legend="Notify channels"
        name="channel"
        checked={props.item?.channels}
        choices={(channels.data ?? []).map((channel) => ({
          value: channel.id,
          label: `${channel.name ?? channel.id} (${channel.type})`,
        }))}
      />
      <Field
        label="Severity"
        name="severity"
        options={SEVERITIES}
        defaultValue={(rule.severity as string) ?? 'warning'}
      />
      <Field
        label="Cooldown"
        name="cooldown_minutes"
        type="number"
        unit="minutes"
        defaultValue={minutes(rule.cooldown_ms as number | undefined) ?? 15}
        hint="One notification per rule and subject within this time."
      />
      <Field
        label="Notify when resolved"
        name="notify_resolved"
        options={['yes', 'no']}
        defaultValue={rule.notify_resolved === false ? 'no' : 'yes'}
      />
    </Form>
  );
}
