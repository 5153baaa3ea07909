// A dry run: where a described request would go and why, without admitting or sending anything. The panel
// takes what rules read (the model, a virtual key, headers, params, a user message) and shows the decision
// and the targets in the order the router would try them.
import type { DryRunInput, DryRunResult, VirtualKey } from '@gw/admin/api-types';
import { useState } from 'react';
import { api } from '../api.ts';
import { useAuth } from '../auth.tsx';
import { Field, Form, useApiQuery } from '../ui.tsx';
import { RoutingDecisionView } from './routing-decision.tsx';

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** A JSON-object field of the form; its errors name the field, so they show under it. */
function jsonObject(values: Record<string, string>, name: string): Record<string, unknown> | undefined {
  const text = values[name]?.trim();
  if (!text) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new Error(`${name}: not JSON: ${(error as Error).message}`);
  }
  if (!isObject(parsed)) throw new Error(`${name}: must be a JSON object`);
  return parsed;
}

/** Headers as the API takes them: every value a string. */
function headersOf(values: Record<string, string>): Record<string, string> | undefined {
  const object = jsonObject(values, 'headers');
  if (!object) return undefined;
  return Object.fromEntries(
    Object.entries(object).map(([name, value]) => {
      if (typeof value !== 'string') throw new Error(`headers: the value of '${name}' must be a string`);
      return [name, value];
    }),
  );
}

function dryRunBody(values: Record<string, string>): DryRunInput {
  const headers = headersOf(values);
  const params = jsonObject(values, 'params');
  return {
    model: values.model ?? '',
    ...(values.virtual_key_id && { virtual_key_id: values.virtual_key_id }),
    ...(headers && { headers }),
    ...(params && { params }),
    ...(values.message && { messages: [{ role: 'user', content: values.message }] }),
  };
}

export function DryRun() {
  const { can } = useAuth();
  const keys = useApiQuery<VirtualKey[]>(can('keys:read') ? '/api/governance/virtual-keys' : undefined);
  const [result, setResult] = useState<DryRunResult>();
  return (
    <section aria-labelledby="dry-run">
      <h2 id="dry-run">Dry run</h2>
      <p className="muted">Where a request would go, and why: nothing is admitted, counted or sent.</p>
      <Form
        label="Describe a request"
        submit="Dry run"
        onSubmit={async (values) => {
          setResult(undefined);
          setResult(
            await api<DryRunResult>('/api/governance/routing-rules/dry-run', {
              method: 'POST',
              body: dryRunBody(values),
            }),
          );
        }}
      >
        <Field label="Model" name="model" required placeholder="openai/gpt-4o-mini, or an alias" />
        <Field
          label="Virtual key"
          name="virtual_key_id"
          options={[
            { value: '', label: 'none' },
            ...(keys.data ?? []).map((key) => ({ value: key.id, label: key.name })),
          ]}
          hint="Its rules, its owners' rules and its providers apply."
        />
        <Field label="Headers (JSON)" name="headers" rows={3} placeholder={'{"x-tier": "gold"}'} />
        <Field label="Params (JSON)" name="params" rows={3} placeholder={'{"temperature": 0.2}'} />
        <Field label="User message" name="message" rows={3} hint="Its length is the prompt's tokens." />
      </Form>
      {result && (
        <div className="panel" data-testid="dry-run-result">
          <h3>Decision</h3>
          <RoutingDecisionView decision={result.decision} />
          <h3>Targets, in the order they would be tried</h3>
          <ol data-testid="dry-run-targets">
            {result.targets.map((target, index) => (
              // biome-ignore lint/suspicious/noArrayIndexKey: a target may repeat; its place is the order.
              <li key={index}>{target.provider ? `${target.provider}/${target.model}` : target.model}</li>
            ))}
          </ol>
        </div>
      )}
    </section>
  );
}
