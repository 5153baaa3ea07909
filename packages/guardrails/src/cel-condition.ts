import { type CelCondition, celConditions } from '@gw/shared/cel';

/**
 * What a rule's condition may look at: the request's metadata, never its content. Every variable is always
 * set ('' or an empty map when the request has none), so a condition never fails on a missing variable.
 */
export type RequestMetadata = {
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
};

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

/** A condition that does not compile or is not a bool; the message says why, and where. */
export { CelError as ConditionError } from '@gw/shared/cel';

/** A compiled condition: true when the rule applies; throws when the evaluation fails (a missing map key). */
export type Condition = CelCondition<RequestMetadata>;

/**
 * Compiles a rule's condition once (parse and type check against the declared variables): an expression
 * that does not parse, names an unknown variable or does not give a bool is refused here, not at a request.
 */
export const compileCondition: (expression: string) => Condition = celConditions<RequestMetadata>(VARIABLES);
