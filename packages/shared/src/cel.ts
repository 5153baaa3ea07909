import { Environment, type ParseResult } from '@marcbachmann/cel-js';

/** CEL is not Turing complete; these bound what one expression may cost (its size, its nesting). */
const LIMITS = {
  maxAstNodes: 400,
  maxDepth: 24,
  maxListElements: 200,
  maxMapEntries: 100,
  maxCallArguments: 8,
};

/** An expression that does not compile or is not a bool: the message names the line and column of the error. */
export class CelError extends Error {
  override name = 'CelError';
}

/** A compiled condition: true when it holds; throws when its evaluation fails (a missing map key). */
export type CelCondition<Variables> = (variables: Variables) => boolean;

/**
 * A compiler of bool conditions over declared variables (name and CEL type), as guardrail conditions and routing
 * rules write them: each expression is parsed and type-checked once, so one that does not parse, names an
 * unknown variable or does not give a bool is refused where it is written, never found broken by a request.
 */
export function celConditions<Variables extends Record<string, unknown>>(
  variables: ReadonlyArray<readonly [keyof Variables & string, string]>,
): (expression: string) => CelCondition<Variables> {
  let environment: Environment | undefined;
  const celEnvironment = () => {
    if (environment) return environment;
    environment = new Environment({ limits: LIMITS, homogeneousAggregateLiterals: false });
    for (const [name, type] of variables) environment.registerVariable(name, type);
    return environment;
  };
  return (expression) => {
    if (expression.trim() === 'true') return () => true;
    let parsed: ParseResult;
    try {
      parsed = celEnvironment().parse(expression);
    } catch (error) {
      throw new CelError(located(error));
    }
    const checked = parsed.check();
    if (!checked.valid) throw new CelError(located(checked.error));
    if (checked.type !== 'bool' && checked.type !== 'dyn') {
      throw new CelError(`must be a bool expression, not ${checked.type}`);
    }
    return (values) => parsed(values) === true;
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
