import type { z } from 'zod';
import type { Logger } from '../logger.ts';
import type { Store } from './store.ts';

/** A document of a collection that fails its schema: written by another version of gw, or by hand. */
export interface InvalidDocument {
  collection: string;
  id: string;
  /** The first problem the schema found, as zod words it. */
  issue: string;
}

/**
 * One collection of the store, read through its schema. The policy for a document that no longer parses is
 * the same everywhere: it counts as absent (`get` answers undefined, `list` leaves it out), is never fatal,
 * and is reported through `invalid`. Writing the document again replaces it.
 */
export interface Collection<Document> {
  readonly name: string;
  get(id: string): Promise<Document | undefined>;
  /** The documents that parse, with their ids, in no particular order. */
  list(): Promise<Array<{ id: string; value: Document }>>;
  /** The documents that parse, in no particular order. */
  values(): Promise<Document[]>;
  /** Every document's id, whether it parses or not (for pruning and for telling what the store lost). */
  ids(): Promise<string[]>;
  put(id: string, value: Document): Promise<void>;
  /** True when the document existed. */
  delete(id: string): Promise<boolean>;
  /** A value read outside `get` and `list`, through the same schema and policy. */
  parse(id: string, value: unknown): Document | undefined;
}

export function defineCollection<Schema extends z.ZodType>(
  store: Store,
  name: string,
  schema: Schema,
  options: { invalid?: ((document: InvalidDocument) => void) | undefined } = {},
): Collection<z.output<Schema>> {
  const parse = (id: string, value: unknown): z.output<Schema> | undefined => {
    if (value === undefined) return undefined;
    const parsed = schema.safeParse(value);
    if (parsed.success) return parsed.data;
    options.invalid?.({ collection: name, id, issue: parsed.error.issues[0]?.message ?? 'invalid' });
    return undefined;
  };
  const list = async () => {
    const documents: Array<{ id: string; value: z.output<Schema> }> = [];
    for (const { id, value } of await store.list(name)) {
      const document = parse(id, value);
      if (document !== undefined) documents.push({ id, value: document });
    }
    return documents;
  };
  return {
    name,
    parse,
    list,
    get: async (id) => parse(id, await store.get(name, id)),
    values: async () => (await list()).map(({ value }) => value),
    ids: async () => (await store.list(name)).map(({ id }) => id),
    put: (id, value) => store.put(name, id, value),
    delete: (id) => store.delete(name, id),
  };
}

/** `invalid` for a process with a logger: one error line per document skipped, naming it and its problem. */
export function logInvalidDocuments(logger: Logger): (document: InvalidDocument) => void {
  return (document) =>
    logger.error(document, 'stored document is invalid (another version wrote it?); ignored');
}
