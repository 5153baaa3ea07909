import { Environment, type ParseResult } from '@marcbachmann/cel-js';

/**
 * What a rule's condition may look at: the request's metadata, never its content. Every variable is always
 * set ('' or an empty map when the request has none), so a condition never fails on a missing variable.
 */
export interface RequestMetadata {
  /** `chat`, `text` or `tool` (an MCP tool call). */
  request_type: string;
  model: string;
  provider: string;
  /** Lowercased header names; credentials (authorization, keys, cookies) are left out. */
  headers: Record<string, string>;
  /** The virtual key's name, and its id. */
  virtual_key: string;
  virtual_key_id: string;
  team: string;
  customer: string;
  user: string;
  /** For MCP tool calls: the client, the tool and its arguments. */
  mcp_client: string;
  tool: string;
  arguments: Record<string, unknown>;
}

const VARIABLES: Array<[keyof RequestMetadata, string]> = [
  ['request_type', 'string'],
  ['model', 'string'],
  ['provider', 'string'],
  ['headers', 'map<string, string>'],
  ['virtual_key', 'string'],
  ['virtual_key_id', 'string'],
  ['team', 'string'],
  ['customer', 'string'],
  ['user', 'string'],
  ['mcp_client', 'string'],
  ['tool', 'string'],
  ['arguments', 'map<string, dyn>'],
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

/** A condition that does not compile or is not a bool; the message says why. */
export class ConditionError extends Error {
  override name = 'ConditionError';
}

/** A compiled condition: true when the rule applies; throws when the evaluation fails (a missing map key). */
export type Condition = (metadata: RequestMetadata) => boolean;

const ALWAYS: Condition = () => true;

/**
 * Compiles a rule's condition once (parse and type check against the declared variables): an expression
 * that does not parse, names an unknown variable or does not give a bool is refused here, not at a request.
 */
export function compileCondition(expression: string): Condition {
  if (expression.trim() === 'true') return ALWAYS;
  let parsed: ParseResult;
  try {
    parsed = celEnvironment().parse(expression);
  } catch (error) {
    throw new ConditionError(firstLine(error));
  }
  const checked = parsed.check();
  if (!checked.valid) throw new ConditionError(firstLine(checked.error));
  if (checked.type !== 'bool' && checked.type !== 'dyn') {
    throw new ConditionError(`must be a bool expression, not ${checked.type}`);
  }
  return (metadata) => parsed(metadata as unknown as Record<string, unknown>) === true;
}

function firstLine(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.split('\n')[0] ?? message;
}
