import { invalidFilter, invalidPath, invalidValue, type ScimError } from './scim-errors.ts';
import { isObject } from './scim-resource.ts';
import {
  type AttributeDefinition,
  findAttribute,
  locateAttribute,
  type ResourceType,
} from './scim-schema.ts';

/**
 * SCIM filters (RFC 7644 §3.4.2.2) and attribute paths (PATCH `path`, `attributes`, `sortBy`): a small
 * recursive-descent parser over the resource type's schema, and an evaluator over a resource as gw answers
 * it. Names resolve case-insensitively to their canonical spelling; a filter on an attribute the schema does
 * not have is refused (400 invalidFilter) rather than matching nothing, so that a client never takes "no such
 * user" for an answer it did not get.
 */

const COMPARE_OPERATORS = ['eq', 'ne', 'co', 'sw', 'ew', 'gt', 'ge', 'lt', 'le'] as const;
type CompareOperator = (typeof COMPARE_OPERATORS)[number];
const isCompareOperator = (word: string): word is CompareOperator =>
  (COMPARE_OPERATORS as readonly string[]).includes(word);

type FilterValue = string | number | boolean | null;

/**
 * An attribute path: an attribute (in an extension when `extension` names its URN), optionally narrowed to the
 * values of a multi-valued attribute that match `where`, optionally one sub-attribute of them.
 * `definition` is undefined for an attribute the schema does not have (PATCH ignores those).
 */
export interface ScimPath {
  extension?: string | undefined;
  attribute: string;
  definition?: AttributeDefinition | undefined;
  where?: ScimFilter | undefined;
  subAttribute?: string | undefined;
  subDefinition?: AttributeDefinition | undefined;
}

export type ScimFilter =
  | { op: 'pr'; path: ScimPath }
  | { op: CompareOperator; path: ScimPath; value: FilterValue; target: AttributeDefinition }
  | { op: 'and' | 'or'; left: ScimFilter; right: ScimFilter }
  | { op: 'not'; filter: ScimFilter };

/** Longest filter or path accepted, and deepest nesting of parentheses and `not`. */
const MAX_LENGTH = 4096;
const MAX_DEPTH = 32;

const ATTRIBUTE_NAME = /^(?:\$ref|[A-Za-z][\w-]*)$/;

type Token = { kind: 'word' | 'string' | '(' | ')' | '[' | ']'; text: string; position: number };

function tokenize(text: string, fail: (detail: string) => ScimError): Token[] {
  const tokens: Token[] = [];
  let index = 0;
  while (index < text.length) {
    const character = text[index]!;
    if (/\s/.test(character)) {
      index++;
      continue;
    }
    if ('()[]'.includes(character)) {
      tokens.push({ kind: character as Token['kind'], text: character, position: index });
      index++;
      continue;
    }
    if (character === '"') {
      let end = index + 1;
      while (end < text.length && text[end] !== '"') end += text[end] === '\\' ? 2 : 1;
      if (end >= text.length) throw fail(`the string at position ${index + 1} has no closing quote`);
      const quoted = text.slice(index, end + 1);
      let value: string;
      try {
        value = JSON.parse(quoted) as string;
      } catch {
        throw fail(`the string at position ${index + 1} is not a valid JSON string (${quoted.slice(0, 40)})`);
      }
      tokens.push({ kind: 'string', text: value, position: index });
      index = end + 1;
      continue;
    }
    let end = index;
    while (end < text.length && !/[\s()[\]"]/.test(text[end]!)) end++;
    tokens.push({ kind: 'word', text: text.slice(index, end), position: index });
    index = end;
  }
  return tokens;
}

/** Where names resolve: the attributes of a resource type, or the sub-attributes inside `attr[…]`. */
type Scope = { type: ResourceType; parent?: undefined } | { type: ResourceType; parent: AttributeDefinition };

class Parser {
  private index = 0;
  private readonly tokens: Token[];
  private readonly fail: (detail: string) => ScimError;
  private readonly unknown: 'refuse' | 'keep';
  private readonly noun: string;

  constructor(options: {
    text: string;
    fail: (detail: string) => ScimError;
    unknown: 'refuse' | 'keep';
    noun: string;
  }) {
    this.fail = options.fail;
    this.unknown = options.unknown;
    this.noun = options.noun;
    if (options.text.length > MAX_LENGTH) throw this.fail(`is longer than ${MAX_LENGTH} characters`);
    if (options.text.trim() === '') throw this.fail('is empty');
    this.tokens = tokenize(options.text, options.fail);
  }

  private peek(): Token | undefined {
    return this.tokens[this.index];
  }

  private where(token: Token | undefined) {
    return token ? `at position ${token.position + 1} ('${token.text.slice(0, 40)}')` : 'at the end';
  }

  private expect(kind: Token['kind']): Token {
    const token = this.peek();
    if (token?.kind !== kind) throw this.fail(`expected '${kind}' ${this.where(token)}`);
    this.index++;
    return token;
  }

  private peekWord(): string | undefined {
    const token = this.peek();
    return token?.kind === 'word' ? token.text.toLowerCase() : undefined;
  }

  finish<T>(value: T): T {
    const token = this.peek();
    if (token) throw this.fail(`unexpected ${this.where(token)}`);
    return value;
  }

  filter(scope: Scope, depth = 0): ScimFilter {
    if (depth > MAX_DEPTH) throw this.fail(`nests deeper than ${MAX_DEPTH} levels`);
    let left = this.conjunction(scope, depth);
    while (this.peekWord() === 'or') {
      this.index++;
      left = { op: 'or', left, right: this.conjunction(scope, depth) };
    }
    return left;
  }

  private conjunction(scope: Scope, depth: number): ScimFilter {
    let left = this.unary(scope, depth);
    while (this.peekWord() === 'and') {
      this.index++;
      left = { op: 'and', left, right: this.unary(scope, depth) };
    }
    return left;
  }

  private unary(scope: Scope, depth: number): ScimFilter {
    const token = this.peek();
    if (this.peekWord() === 'not') {
      this.index++;
      this.expect('(');
      const inner = this.filter(scope, depth + 1);
      this.expect(')');
      return { op: 'not', filter: inner };
    }
    if (token?.kind === '(') {
      this.index++;
      const inner = this.filter(scope, depth + 1);
      this.expect(')');
      return inner;
    }
    if (token?.kind !== 'word') throw this.fail(`expected an attribute name ${this.where(token)}`);
    return this.attributeExpression(scope, depth);
  }

  private attributeExpression(scope: Scope, depth: number): ScimFilter {
    const path = this.path(scope, depth);
    const operatorToken = this.peek();
    const operator = this.peekWord();
    if (operator === 'pr') {
      this.index++;
      return { op: 'pr', path };
    }
    if (operator !== undefined && isCompareOperator(operator)) {
      this.index++;
      return this.comparison(path, operator, this.value());
    }
    // `emails[type eq "work"]` alone: some value matches.
    if (path.where && path.subAttribute === undefined) return { op: 'pr', path };
    throw this.fail(
      `expected an operator (${COMPARE_OPERATORS.join(', ')} or pr) after '${describePath(path)}' ${this.where(operatorToken)}`,
    );
  }

  /** attrPath, or valuePath (`attr[filter]`) with an optional `.subAttr` after it. */
  path(scope: Scope, depth = 0): ScimPath {
    const token = this.expect('word');
    const path = this.resolve(token, scope);
    if (this.peek()?.kind !== '[') return path;
    if (scope.parent)
      throw this.fail(`a filter inside [ ] cannot hold another [ ] ${this.where(this.peek())}`);
    if (path.subAttribute !== undefined)
      throw this.fail(`'${describePath(path)}[' filters a sub-attribute; filter the attribute itself`);
    if (path.definition && (!path.definition.multiValued || path.definition.type !== 'complex'))
      throw this.fail(`'${path.attribute}' is not a multi-valued complex attribute: it takes no [ ] filter`);
    this.index++;
    const where = this.filter(
      path.definition ? { type: scope.type, parent: path.definition } : { type: scope.type, parent: OPAQUE },
      depth + 1,
    );
    this.expect(']');
    const next = this.peek();
    if (next?.kind === 'word' && next.text.startsWith('.')) {
      this.index++;
      const name = next.text.slice(1);
      if (!ATTRIBUTE_NAME.test(name))
        throw this.fail(`'${name}' is not an attribute name ${this.where(next)}`);
      const subDefinition = findAttribute(path.definition?.subAttributes, name);
      if (!subDefinition && path.definition) this.unknownAttribute(`${path.attribute}.${name}`);
      return { ...path, where, subAttribute: subDefinition?.name ?? name, subDefinition };
    }
    return { ...path, where };
  }

  private unknownAttribute(name: string): void {
    if (this.unknown === 'refuse')
      throw this.fail(`'${name}' is not an attribute of a ${this.noun} (GET /scim/v2/Schemas lists them)`);
  }

  private resolve(token: Token, scope: Scope): ScimPath {
    let urn: string | undefined;
    let rest = token.text;
    if (/^urn:/i.test(rest)) {
      if (scope.parent) throw this.fail(`a schema URN cannot name a sub-attribute ${this.where(token)}`);
      const colon = rest.lastIndexOf(':');
      urn = rest.slice(0, colon);
      rest = rest.slice(colon + 1);
    }
    const parts = rest.split('.');
    if (parts.length > 2 || parts.some((part) => !ATTRIBUTE_NAME.test(part)))
      throw this.fail(`'${token.text.slice(0, 80)}' is not an attribute path ${this.where(token)}`);
    const [name, sub] = parts as [string, string | undefined];
    if (scope.parent) {
      if (sub !== undefined) throw this.fail(`'${rest}' goes too deep inside [ ] ${this.where(token)}`);
      const definition = findAttribute(scope.parent.subAttributes, name);
      if (!definition && scope.parent !== OPAQUE) this.unknownAttribute(`${scope.parent.name}.${name}`);
      return { attribute: definition?.name ?? name, definition };
    }
    const located = locateAttribute(scope.type, name, urn);
    if (!located) {
      this.unknownAttribute(urn ? `${urn}:${rest}` : rest);
      return {
        ...(urn !== undefined && { extension: urn }),
        attribute: name,
        ...(sub !== undefined && { subAttribute: sub }),
      };
    }
    if (this.unknown === 'refuse' && located.definition.returned === 'never')
      throw this.fail(`'${located.definition.name}' is never returned, so no filter reads it`);
    const path: ScimPath = {
      extension: located.extension,
      attribute: located.definition.name,
      definition: located.definition,
    };
    if (sub === undefined) return path;
    if (located.definition.type !== 'complex')
      throw this.fail(`'${located.definition.name}' has no sub-attributes ('${rest}') ${this.where(token)}`);
    const subDefinition = findAttribute(located.definition.subAttributes, sub);
    if (!subDefinition) this.unknownAttribute(`${located.definition.name}.${sub}`);
    return { ...path, subAttribute: subDefinition?.name ?? sub, subDefinition };
  }

  private value(): FilterValue {
    const token = this.peek();
    if (!token) throw this.fail('expected a value at the end');
    this.index++;
    if (token.kind === 'string') return token.text;
    if (token.kind === 'word') {
      const word = token.text.toLowerCase();
      if (word === 'true') return true;
      if (word === 'false') return false;
      if (word === 'null') return null;
      if (/^-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?$/.test(token.text)) return Number(token.text);
    }
    throw this.fail(
      `expected a value (a "quoted string", a number, true, false or null) ${this.where(token)}`,
    );
  }

  private comparison(path: ScimPath, op: CompareOperator, value: FilterValue): ScimFilter {
    const named = describePath(path);
    let target = path.subDefinition ?? path.definition;
    if (target?.type === 'complex' && path.subAttribute === undefined) {
      // A complex attribute compares its `value` sub-attribute (`emails co "example.com"`).
      target = findAttribute(target.subAttributes, 'value');
      if (!target) throw this.fail(`'${named}' is complex: compare one of its sub-attributes`);
    }
    // An attribute the schema does not have (a PATCH path only) compares as text, or as a boolean.
    target ??= { ...OPAQUE, type: typeof value === 'boolean' ? 'boolean' : 'string', multiValued: false };
    if (value === null) {
      if (op !== 'eq' && op !== 'ne') throw this.fail(`'${named} ${op} null': null takes eq or ne only`);
      return { op, path, value, target };
    }
    if (target.type === 'boolean') {
      if (typeof value !== 'boolean' || (op !== 'eq' && op !== 'ne'))
        throw this.fail(`'${named}' is boolean: compare it with eq or ne and true or false`);
      return { op, path, value, target };
    }
    if (typeof value !== 'string')
      throw this.fail(
        `'${named}' is a ${target.type}: compare it with a "quoted string", not ${String(value)}`,
      );
    if (target.type === 'dateTime' && Number.isNaN(Date.parse(value)))
      throw this.fail(
        `'${named}' is a date and time: '${value.slice(0, 40)}' is not one (2024-05-13T04:42:34Z)`,
      );
    return { op, path, value, target };
  }
}

/** The definition inside `[ ]` of an attribute the schema does not have: any name goes (PATCH only). */
const OPAQUE: AttributeDefinition = {
  name: '',
  type: 'complex',
  multiValued: true,
  description: '',
  required: false,
  caseExact: false,
  mutability: 'readWrite',
  returned: 'default',
  uniqueness: 'none',
  subAttributes: [],
};

function describePath(path: ScimPath): string {
  const base = path.extension ? `${path.extension}:${path.attribute}` : path.attribute;
  return path.subAttribute === undefined ? base : `${base}.${path.subAttribute}`;
}

/** A `filter` query parameter (or `.search` body member); 400 invalidFilter naming what is wrong. */
export function parseFilter(text: string, type: ResourceType): ScimFilter {
  const parser = new Parser({ text, fail: invalidFilter, unknown: 'refuse', noun: type.id });
  return parser.finish(parser.filter({ type }));
}

/**
 * A PATCH operation's `path` (`members`, `name.givenName`, `emails[type eq "work"].value`,
 * `urn:…:enterprise:2.0:User:department`); 400 invalidPath naming what is wrong. Attributes the schema does not
 * have come back without a definition.
 */
export function parsePath(text: string, type: ResourceType): ScimPath {
  const parser = new Parser({
    text,
    fail: (detail) => invalidPath(`path: ${detail}`),
    unknown: 'keep',
    noun: type.id,
  });
  return parser.finish(parser.path({ type }));
}

/** A name of `attributes`, `excludedAttributes` or `sortBy` (no filter); undefined when the schema lacks it. */
export function parseAttributeName(
  text: string,
  type: ResourceType,
  parameter: string,
): ScimPath | undefined {
  const fail = (detail: string) => invalidValue(`${parameter}: ${detail}`);
  const parser = new Parser({ text, fail, unknown: 'keep', noun: type.id });
  const path = parser.finish(parser.path({ type }));
  if (path.where) throw fail(`'${text.slice(0, 80)}' takes no [ ] filter here`);
  return path.definition ? path : undefined;
}

/** The values a path reaches in a resource (flattened over multi-valued attributes), absent ones left out. */
export function valuesAt(resource: Record<string, unknown>, path: ScimPath, compared = false): unknown[] {
  const container = path.extension === undefined ? resource : resource[path.extension];
  if (!isObject(container)) return [];
  const raw = container[path.attribute];
  let items = raw === undefined || raw === null ? [] : Array.isArray(raw) ? raw : [raw];
  const where = path.where;
  if (where) items = items.filter((item) => isObject(item) && matches(where, item));
  if (path.subAttribute !== undefined) {
    const sub = path.subAttribute;
    items = items.map((item) => (isObject(item) ? item[sub] : undefined));
  } else if (compared && path.definition?.type === 'complex') {
    items = items.map((item) => (isObject(item) ? item['value'] : undefined));
  }
  return items.filter((item) => item !== undefined && item !== null);
}

function compare(
  op: CompareOperator,
  actual: unknown,
  expected: string | number | boolean,
  target: AttributeDefinition,
) {
  if (typeof expected === 'boolean' || typeof expected === 'number') return actual === expected;
  if (typeof actual !== 'string') return false;
  if (target.type === 'dateTime') {
    const [a, b] = [Date.parse(actual), Date.parse(expected)];
    if (Number.isNaN(a)) return false;
    return op === 'eq' || op === 'ne'
      ? a === b
      : op === 'gt'
        ? a > b
        : op === 'ge'
          ? a >= b
          : op === 'lt'
            ? a < b
            : op === 'le'
              ? a <= b
              : compareText(op, actual, expected, target.caseExact);
  }
  return compareText(op, actual, expected, target.caseExact);
}

function compareText(op: CompareOperator, actual: string, expected: string, caseExact: boolean): boolean {
  const a = caseExact ? actual : actual.toLowerCase();
  const b = caseExact ? expected : expected.toLowerCase();
  switch (op) {
    case 'eq':
    case 'ne':
      return a === b;
    case 'co':
      return a.includes(b);
    case 'sw':
      return a.startsWith(b);
    case 'ew':
      return a.endsWith(b);
    case 'gt':
      return a > b;
    case 'ge':
      return a >= b;
    case 'lt':
      return a < b;
    case 'le':
      return a <= b;
  }
}

/** Whether a resource (or, inside `[ ]`, one value of a multi-valued attribute) passes the filter. */
export function matches(filter: ScimFilter, resource: Record<string, unknown>): boolean {
  switch (filter.op) {
    case 'and':
      return matches(filter.left, resource) && matches(filter.right, resource);
    case 'or':
      return matches(filter.left, resource) || matches(filter.right, resource);
    case 'not':
      return !matches(filter.filter, resource);
    case 'pr':
      return valuesAt(resource, filter.path).some(
        (value) => value !== '' && !(Array.isArray(value) && value.length === 0),
      );
    default: {
      const values = valuesAt(resource, filter.path, true);
      const { value, target } = filter;
      if (value === null) return filter.op === 'eq' ? values.length === 0 : values.length > 0;
      const equal = values.some((actual) => compare(filter.op, actual, value, target));
      // `ne`: no value equals (an absent attribute is not equal).
      return filter.op === 'ne' ? !equal : equal;
    }
  }
}
