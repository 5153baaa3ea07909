import { celConditions } from '@gw/shared/cel';

/**
 * What a routing rule's `cel_expression` may read (docs/routing.md "Variables"). Every variable is always set
 * (an absent owner is `{id: "", name: "", metadata: {}}`), so a rule about a team is simply false for a key
 * without one; a missing map key (`headers["x-tier"]` on a request without it) is an evaluation error: the
 * rule is skipped, and `"x-tier" in headers` or `has(…)` says what the rule means.
 */
export type RoutingVariables = {
  /** `chat`, `text` or `embeddings`. */
  request_type: string;
  /** The model and provider the request asked for (`provider` empty for a bare model). */
  model: string;
  provider: string;
  stream: boolean;
  params: Record<string, unknown>;
  /** Lowercased header names; credentials are left out. */
  headers: Record<string, string>;
  key: OwnerVariables;
  team: OwnerVariables;
  customer: OwnerVariables;
  user: OwnerVariables;
  business_unit: OwnerVariables;
  /** gw's estimate of the prompt's tokens. */
  tokens: bigint;
  /** Budget and rate-limit use of the key and its owners, in percent (read only when a rule names it). */
  usage: Record<string, unknown>;
  /** Live signals of the rule's own targets by `provider/model` (made only when the rule names it). */
  targets: Record<string, unknown>;
};

export type OwnerVariables = {
  id: string;
  name: string;
  metadata: Record<string, string>;
};

const VARIABLES: Array<[keyof RoutingVariables, string]> = [
  ['request_type', 'string'],
  ['model', 'string'],
  ['provider', 'string'],
  ['stream', 'bool'],
  ['params', 'map<string, dyn>'],
  ['headers', 'map<string, string>'],
  ['key', 'map<string, dyn>'],
  ['team', 'map<string, dyn>'],
  ['customer', 'map<string, dyn>'],
  ['user', 'map<string, dyn>'],
  ['business_unit', 'map<string, dyn>'],
  ['tokens', 'int'],
  ['usage', 'map<string, dyn>'],
  ['targets', 'map<string, dyn>'],
];

const compile = celConditions<RoutingVariables>(VARIABLES);

/** A compiled rule expression; `reads` says which of the costly variables it names. */
export interface RuleExpression {
  matches(variables: RoutingVariables): boolean;
  reads: { usage: boolean; targets: boolean };
}

/**
 * Compiles an expression once: one that does not parse, names an unknown variable or does not give a bool is
 * refused here, at write, with its position (`CelError`).
 */
export function compileRuleExpression(expression: string): RuleExpression {
  return {
    matches: compile(expression),
    reads: { usage: /\busage\b/.test(expression), targets: /\btargets\b/.test(expression) },
  };
}
