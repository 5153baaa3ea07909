import { GatewayError, isPlainObject, mergePatch } from '@gw/shared';
import type { z } from 'zod';
import { type Collection, inputSchemas, type Stored } from './resources.ts';

export type ResourceInput = z.infer<(typeof inputSchemas)[Collection]>;

function invalid(message: string, param: string): GatewayError {
  return new GatewayError({ type: 'invalid_request', message, param: param || null });
}

/** A zod path as an operator writes it: `budgets[0].max_limit`. */
function fieldPath(path: ReadonlyArray<PropertyKey>): string {
  return path
    .map((part, index) =>
      typeof part === 'number' ? `[${part}]` : `${index === 0 ? '' : '.'}${String(part)}`,
    )
    .join('');
}

/** Validates a whole resource with its collection's schema; the 400 names the first offending field. */
export function parseResourceInput(collection: Collection, body: unknown): ResourceInput {
  const result = inputSchemas[collection].safeParse(body);
  if (result.success) return result.data;
  const issue = result.error.issues[0]!;
  if (issue.code === 'unrecognized_keys') {
    const path = fieldPath([...issue.path, issue.keys[0] ?? '']);
    throw invalid(`${path}: is not a field of ${collection}`, path);
  }
  const path = fieldPath(issue.path);
  const message =
    issue.code === 'invalid_type' && issue.message.endsWith('received undefined')
      ? 'is required'
      : issue.message;
  throw invalid(path ? `${path}: ${message}` : message, path);
}

/**
 * What a PUT must name because leaving it out would silently change what the resource does: a key without
 * `provider_configs` allows nothing, so a PUT that forgot them (a rename, a deactivation) would lock its
 * callers out. An explicit `[]` is accepted. Every other field a PUT leaves out is removed or takes its
 * schema's default, as on create; PATCH changes only what it names.
 */
const PUT_REQUIRED: Record<Collection, readonly string[]> = {
  'virtual-keys': ['name', 'provider_configs'],
  customers: ['name'],
  teams: ['name'],
  users: ['name'],
  'business-units': ['name'],
  'model-aliases': ['name', 'targets'],
  'routing-rules': ['name', 'cel_expression', 'targets'],
};

/** Refuses a PUT body that misses a required part, naming it. */
export function assertWholeResource(collection: Collection, body: unknown): void {
  if (!isPlainObject(body)) throw invalid('request body must be a JSON object', '');
  const missing = PUT_REQUIRED[collection].filter((field) => body[field] === undefined);
  if (missing.length === 0) return;
  throw invalid(
    `${missing.join(', ')}: ${missing.length === 1 ? 'is' : 'are'} required in a PUT, which replaces the whole resource (PATCH changes only the fields it names)`,
    missing[0]!,
  );
}

/** Fields a stored resource has that no input carries: its identity, timestamps and a key's hash and hint. */
const STORED_ONLY = new Set(['id', 'created_at', 'updated_at', 'value_hash', 'value_hint']);

/**
 * The input a PATCH is merged onto: the stored resource without its read-only fields (budgets keep their
 * ids, so a patched budget goes on counting what it spent). `budget`, the one-object form of `budgets`, in a
 * patch stands for `budgets`: it replaces them (and `budget: null` removes them).
 */
export function patchedInput(resource: Stored, patch: Record<string, unknown>): unknown {
  const base = Object.fromEntries(Object.entries(resource).filter(([field]) => !STORED_ONLY.has(field)));
  if ('budget' in patch && !('budgets' in patch)) delete base['budgets'];
  return mergePatch(base, patch);
}
