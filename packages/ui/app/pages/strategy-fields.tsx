// The strategy and objective fields a routing rule, a model alias and a virtual key share: how the first target
// is chosen among the candidates, and the p95 bounds the choice must keep.
import type { RoutingRule, RoutingStrategy } from '@gw/admin/api-types';
import { Field } from '../ui.tsx';

type Objective = NonNullable<RoutingRule['objective']>;

/** Every strategy with what it orders by (a strategy added to the API and missing here fails the typecheck). */
const STRATEGIES: Record<RoutingStrategy, string> = {
  weighted: 'weighted: by the targets’ weights',
  least_busy: 'least busy: fewest requests in flight',
  lowest_latency: 'lowest latency: fastest recent p95',
  lowest_cost: 'lowest cost: cheapest estimate for the request',
  usage: 'usage: most rate-limit headroom left',
  cache_affinity: 'cache affinity: one conversation, one target',
};

const isStrategy = (value: string): value is RoutingStrategy => value in STRATEGIES;

export function StrategyFields(props: {
  /** The API's name of the strategy field (`strategy`, or a key's `routing_strategy`). */
  name: string;
  strategy?: RoutingStrategy | undefined;
  objective?: Objective | undefined;
  /** What an unset strategy means here. */
  unset?: string;
}) {
  const choices = Object.entries(STRATEGIES).map(([value, label]) => ({ value, label }));
  return (
    <>
      <Field
        label="Strategy"
        name={props.name}
        defaultValue={props.strategy ?? ''}
        options={props.unset ? [{ value: '', label: props.unset }, ...choices] : choices}
      />
      <Field
        label="Objective: max time to first token p95 (ms)"
        name="max_ttft_p95_ms"
        type="number"
        defaultValue={props.objective?.max_ttft_p95_ms}
        hint="Optional: the choice prefers targets whose recent p95 stays under it."
      />
      <Field
        label="Objective: max latency p95 (ms)"
        name="max_latency_p95_ms"
        type="number"
        defaultValue={props.objective?.max_latency_p95_ms}
        hint="Optional."
      />
    </>
  );
}

/** The strategy the fields hold, or none (the form's "unset"). */
export function strategyOf(values: Record<string, string>, name: string): RoutingStrategy | undefined {
  const value = values[name] ?? '';
  return isStrategy(value) ? value : undefined;
}

/** The objective the fields hold, or none when both bounds are empty. */
export function objectiveOf(values: Record<string, string>): Objective | undefined {
  const bound = (name: string) => (values[name] ? Number(values[name]) : undefined);
  const objective = {
    ...(bound('max_ttft_p95_ms') !== undefined && { max_ttft_p95_ms: bound('max_ttft_p95_ms') }),
    ...(bound('max_latency_p95_ms') !== undefined && { max_latency_p95_ms: bound('max_latency_p95_ms') }),
  };
  return Object.keys(objective).length ? objective : undefined;
}

/**
 * A PATCH's strategy and objective (a merge patch): an emptied field is sent as null, which removes it; an
 * objective replaces the stored one bound by bound.
 */
export function strategyPatch(
  values: Record<string, string>,
  fields: { strategy: string; objective: string },
): Record<string, unknown> {
  const objective = objectiveOf(values);
  return {
    [fields.strategy]: strategyOf(values, fields.strategy) ?? null,
    [fields.objective]: objective
      ? {
          max_ttft_p95_ms: objective.max_ttft_p95_ms ?? null,
          max_latency_p95_ms: objective.max_latency_p95_ms ?? null,
        }
      : null,
  };
}
