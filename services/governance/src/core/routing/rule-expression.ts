import { Environment, type ParseResult } from '@marcbachmann/cel-js';

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

/** CEL is not Turing complete; these bound what one expression may cost (its size, its nesting). */
const LIMITS = {
  maxAstNodes: 400,
  maxDepth: 24,
  maxListElements: 200,
  maxMapEntries: 100,
  maxCallArguments: 8,
};

let environment: Environment | undefined;
function celEnvironment(): Environment {
  if (environment) return environment;
  environment = new Environment({ limits: LIMITS, homogeneousAggregateLiterals: false });
  for (const [name, type] of VARIABLES) environment.registerVariable(name, type);
  return environment;
}

/** An expression that does not compile: the message names the line and column of the error. */
export class RuleExpressionError extends Error {
  override name = 'RuleExpressionError';
}

/** A compiled rule expression; `reads` says which of the costly variables it names. */
export interface RuleExpression {
  matches(variables: RoutingVariables): boolean;
  reads: { usage: boolean; targets: boolean };
}

/**
 * Compiles an expression once (parse and type check against the declared variables): one that does not
 * parse, names an unknown variable or does not give a bool is refused here, at write, with its position.
 */
export function compileRuleExpression(expression: string): RuleExpression {
  const reads = { usage: /\busage\b/.test(expression), targets: /\btargets\b/.test(expression) };
  if (expression.trim() === 'true') return { matches: () => true, reads };
  let parsed: ParseResult;
  try {
    parsed = celEnvironment().parse(expression);
  } catch (error) {
    throw new RuleExpressionError(located(error));
  }
  const checked = parsed.check();
  if (!checked.valid) throw new RuleExpressionError(located(checked.error));
  if (checked.type !== 'bool' && checked.type !== 'dyn') {
    throw new RuleExpressionError(`must be a bool expression, not ${checked.type}`);
  }
  return {
    matches: (variables) => parsed(variables) === true,
    reads,
  };
}

/**
 * The library's message with its source excerpt (`>    2 |   foo > 1` and a caret line below) turned into
 * a position an API answer can carry on one line: `Unknown variable: foo (line 2, column 3)`.
 */
function located(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const lines = message.split('\n');
  const first = lines[0] ?? message;
  const excerpt = lines.findIndex((line) => /^>\s*\d+ \| /.test(line));
  const caret = lines[excerpt + 1];
  if (excerpt === -1 || caret === undefined) return first;
  const source = lines[excerpt]!;
  const gutter = source.indexOf('| ') + 2;
  const line = Number(/^>\s*(\d+)/.exec(source)?.[1]);
  const column = caret.indexOf('^') - gutter + 1;
  return column > 0 ? `${first} (line ${line}, column ${column})` : `${first} (line ${line})`;
}
