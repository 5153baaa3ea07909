import { z } from 'zod';

/**
 * What a schema declares of a field beyond its type (docs/architecture.md "Declared configuration"). The schema
 * of a resource or config section marks its fields once; reference resolution, the secret policy, masking in
 * answers, the write-time outbound check and which settings apply live are all derived from the marks, so a
 * new resource type is safe because its schema says what its fields are, not because of how they are named.
 *
 * - `secret`: a credential. Masked in every answer; may be written as a reference (`env.NAME`, `vault.…`), which
 *   is kept as written and read where it is used (so the store never holds the secret); only the config file,
 *   or an API caller with `secrets:reference`, may name one.
 * - `secret-by-name`: a free-form map (headers, a provider key's adapter settings) whose members are credentials
 *   when their names say so (`authorization`, `secret_key`…), at any depth.
 * - `destination`: where the resource sends its credentials (a URL, a host, a port, a region). A URL is
 *   checked against the outbound address policy when written; changing a destination while keeping a stored
 *   credential needs the credential again (or `secrets:reference`).
 * - `restart`: a setting of a live section that is read when a process starts (a pool size, a timer).
 * - `verbatim`: a string taken as written, never resolved (patterns of references: `env.OPENAI_*`).
 */
export type FieldMark = 'secret' | 'secret-by-name' | 'destination' | 'restart' | 'verbatim';

/** Whether a config section applies to the next request when changed, or at the next start of each process. */
export type SectionApplies = 'live' | 'restart';

interface Declaration {
  mark?: FieldMark;
  applies?: SectionApplies;
}

const declarations = z.registry<Declaration>();

function declare<Schema extends z.ZodType>(schema: Schema, declaration: Declaration): Schema {
  declarations.add(schema, { ...declarations.get(schema), ...declaration });
  return schema;
}

/** A credential field (see FieldMark). */
export const secret = <Schema extends z.ZodType>(schema: Schema) => declare(schema, { mark: 'secret' });

/** A free-form map whose members are credentials when their names say so (see FieldMark). */
export const secretsByName = <Schema extends z.ZodType>(schema: Schema) =>
  declare(schema, { mark: 'secret-by-name' });

/** Where a resource sends its credentials (see FieldMark). */
export const destination = <Schema extends z.ZodType>(schema: Schema) =>
  declare(schema, { mark: 'destination' });

/** A string taken as written: an `env.NAME` in it names a variable, and is not replaced by its value. */
export const verbatim = <Schema extends z.ZodType>(schema: Schema) => declare(schema, { mark: 'verbatim' });

/** A setting of a live section that applies at the next start only. */
export const restartOnly = <Schema extends z.ZodType>(schema: Schema) => declare(schema, { mark: 'restart' });

/** A config section that applies without a restart (its `restartOnly` fields excepted). */
export const liveSection = <Schema extends z.ZodType>(schema: Schema) => declare(schema, { applies: 'live' });

/** A config section read once, when a process starts. */
export const restartSection = <Schema extends z.ZodType>(schema: Schema) =>
  declare(schema, { applies: 'restart' });

/**
 * The marks of a schema as a tree over its fields: what a walker of a value of that schema needs. Array items
 * and map values share one node (`items`); the options of a union are merged (a field marked in any option is
 * marked).
 */
export interface FieldTree {
  marks: ReadonlySet<FieldMark>;
  applies: SectionApplies | undefined;
  fields: ReadonlyMap<string, FieldTree>;
  items: FieldTree | undefined;
}

interface MutableTree {
  marks: Set<FieldMark>;
  applies: SectionApplies | undefined;
  fields: Map<string, MutableTree>;
  items: MutableTree | undefined;
}

const emptyTree = (): MutableTree => ({
  marks: new Set(),
  applies: undefined,
  fields: new Map(),
  items: undefined,
});

/** zod's definition, as far as the walk reads it (the public `def` of v4's classic schemas). */
interface Definition {
  type: string;
  shape?: Record<string, z.ZodType>;
  element?: z.ZodType;
  valueType?: z.ZodType;
  innerType?: z.ZodType;
  in?: z.ZodType;
  out?: z.ZodType;
  options?: z.ZodType[];
  left?: z.ZodType;
  right?: z.ZodType;
  getter?: () => z.ZodType;
}

const trees = new WeakMap<z.ZodType, FieldTree>();

/** The field tree of a schema (computed once per schema). */
export function fieldTree(schema: z.ZodType): FieldTree {
  let tree = trees.get(schema);
  if (!tree) {
    const built = emptyTree();
    fill(built, schema, new Set());
    tree = built;
    trees.set(schema, tree);
  }
  return tree;
}

function fill(tree: MutableTree, schema: z.ZodType, seen: Set<z.ZodType>): void {
  if (seen.has(schema)) return;
  seen.add(schema);
  const declaration = declarations.get(schema);
  if (declaration?.mark) tree.marks.add(declaration.mark);
  if (declaration?.applies) tree.applies ??= declaration.applies;
  const definition = (schema as unknown as { def: Definition }).def;
  const into = (inner: z.ZodType | undefined) => inner && fill(tree, inner, seen);
  switch (definition.type) {
    case 'object':
      for (const [name, field] of Object.entries(definition.shape ?? {})) {
        const child = tree.fields.get(name) ?? emptyTree();
        tree.fields.set(name, child);
        fill(child, field, new Set(seen));
      }
      break;
    case 'array':
    case 'record': {
      tree.items ??= emptyTree();
      const member = definition.type === 'array' ? definition.element : definition.valueType;
      if (member) fill(tree.items, member, new Set(seen));
      break;
    }
    case 'union':
      for (const option of definition.options ?? []) fill(tree, option, new Set(seen));
      break;
    case 'intersection':
      into(definition.left);
      into(definition.right);
      break;
    case 'pipe':
      into(definition.in);
      into(definition.out);
      break;
    case 'lazy':
      into(definition.getter?.());
      break;
    default:
      // optional, nullable, default, prefault, catch, readonly, nonoptional: the wrapped schema.
      into(definition.innerType);
  }
}

/** A field's place in a value, as messages name it: `keys[0].config.endpoint`. */
export function joinPath(path: string, field: string | number): string {
  if (typeof field === 'number') return `${path}[${field}]`;
  return path ? `${path}.${field}` : field;
}

/** What the walk tells of each string (or number) it meets. */
export interface VisitedField {
  path: string;
  value: string | number;
  /** The field is a credential (marked `secret`, or named as one inside a `secret-by-name` map). */
  secret: boolean;
  destination: boolean;
  /** Taken as written (`verbatim`): no reference in it is resolved. */
  verbatim: boolean;
}

/** Field names that say a member of a `secret-by-name` map is a credential. */
const CREDENTIAL_NAME =
  /secret|token|password|passwd|credential|api[-_]?key|access[-_]?key|private|authorization|(?:^|[-_])auth(?:$|[-_])|cookie|signature/i;

/** Whether a member of a `secret-by-name` map is a credential by its name. */
const isCredentialName = (name: string): boolean => CREDENTIAL_NAME.test(name);

/**
 * Calls `visit` for every string and number of `value`, with what the schema's marks say of it. Unknown fields
 * (not in the schema) are walked as unmarked; inside a `secret-by-name` map a member is a credential when its
 * own name or an enclosing member's says so.
 */
export function walkFields(
  tree: FieldTree,
  value: unknown,
  visit: (field: VisitedField) => void,
  path = '',
): void {
  walk(tree, value, path, { secret: false, byName: false }, visit);
}

function walk(
  tree: FieldTree | undefined,
  value: unknown,
  path: string,
  /** `secret`: everything below is a credential; `byName`: inside a `secret-by-name` map. */
  context: { secret: boolean; byName: boolean },
  visit: (field: VisitedField) => void,
): void {
  // A secret field whose value is an object (a service account's JSON as an object) is a credential throughout.
  const secret = context.secret || tree?.marks.has('secret') === true;
  const byName = context.byName || tree?.marks.has('secret-by-name') === true;
  if (typeof value === 'string' || typeof value === 'number') {
    visit({
      path,
      value,
      secret,
      destination: tree?.marks.has('destination') === true,
      verbatim: tree?.marks.has('verbatim') === true,
    });
    return;
  }
  if (Array.isArray(value)) {
    for (const [index, item] of value.entries())
      walk(tree?.items, item, joinPath(path, index), { secret, byName }, visit);
    return;
  }
  if (value === null || typeof value !== 'object') return;
  for (const [name, item] of Object.entries(value)) {
    const child = tree?.fields.get(name) ?? tree?.items;
    walk(
      child,
      item,
      joinPath(path, name),
      { secret: secret || (byName && isCredentialName(name)), byName },
      visit,
    );
  }
}

/** The section's marks of each top-level field: which apply live, which at restart. */
export function sectionsOf(tree: FieldTree): Map<string, SectionApplies> {
  const sections = new Map<string, SectionApplies>();
  for (const [name, child] of tree.fields) if (child.applies) sections.set(name, child.applies);
  return sections;
}

/** The paths of a live section's fields that are read at start only (`restartOnly`), dotted. */
export function restartOnlyPaths(tree: FieldTree, prefix = ''): string[] {
  const paths: string[] = [];
  for (const [name, child] of tree.fields) {
    const path = joinPath(prefix, name);
    if (child.marks.has('restart')) paths.push(path);
    else paths.push(...restartOnlyPaths(child, path));
  }
  return paths;
}
