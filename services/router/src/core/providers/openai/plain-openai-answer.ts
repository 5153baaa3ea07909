import { copyUndeclared, isPlainObject } from '@gw/shared';
import type { OpenAiChatAnswer } from './openai-schemas.ts';

type Members = Record<string, unknown>;

/** The members of each object of an answer that the schema reads; the others pass through as they came. */
const ANSWER_MEMBERS = new Set(['id', 'created', 'model', 'system_fingerprint', 'choices', 'usage']);
const CHOICE_MEMBERS = new Set(['index', 'message', 'finish_reason']);
const MESSAGE_MEMBERS = new Set(['role', 'content', 'tool_calls']);
const USAGE_MEMBERS = new Set([
  'prompt_tokens',
  'completion_tokens',
  'total_tokens',
  'prompt_tokens_details',
  'completion_tokens_details',
]);
const PROMPT_DETAILS_MEMBERS = new Set(['cached_tokens', 'audio_tokens']);
const COMPLETION_DETAILS_MEMBERS = new Set(['reasoning_tokens', 'audio_tokens']);

/** What z.number() takes: JSON's 1e400 parses to Infinity, which it refuses. */
function isNumber(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value);
}

function isText(value: unknown): value is string {
  return typeof value === 'string';
}

/**
 * Copies an optional member the schema declares `.nullish()` when the source has it, as the schema does (a
 * member it lacks stays absent, a null stays null); false when its value is not one the schema takes.
 */
function copyNullish(target: Members, source: Members, name: string, check: (value: unknown) => boolean) {
  if (!(name in source)) return true;
  const value = source[name];
  if (value !== null && value !== undefined && !check(value)) return false;
  target[name] = value;
  return true;
}

/** A token count the schema turns from absent or null into 0. */
function tokens(value: unknown): number | undefined {
  if (value === undefined || value === null) return 0;
  return isNumber(value) ? value : undefined;
}

/** Counts of `prompt_tokens_details` or `completion_tokens_details`, read as the schema reads them. */
function plainDetails(value: unknown, declared: ReadonlySet<string>): Members | null | undefined {
  if (value === null || value === undefined) return value;
  if (!isPlainObject(value)) return undefined;
  const details: Members = {};
  for (const name of declared) if (!copyNullish(details, value, name, isNumber)) return undefined;
  return copyUndeclared(details, value, declared) ? details : undefined;
}

function plainUsage(value: unknown): Members | null | undefined {
  if (value === null || value === undefined) return value;
  if (!isPlainObject(value)) return undefined;
  const prompt = tokens(value['prompt_tokens']);
  const completion = tokens(value['completion_tokens']);
  if (prompt === undefined || completion === undefined) return undefined;
  const usage: Members = { prompt_tokens: prompt, completion_tokens: completion };
  if (!copyNullish(usage, value, 'total_tokens', isNumber)) return undefined;
  for (const [name, declared] of [
    ['prompt_tokens_details', PROMPT_DETAILS_MEMBERS],
    ['completion_tokens_details', COMPLETION_DETAILS_MEMBERS],
  ] as const) {
    if (!(name in value)) continue;
    const details = plainDetails(value[name], declared);
    if (details === undefined && value[name] !== undefined) return undefined;
    usage[name] = details;
  }
  return copyUndeclared(usage, value, USAGE_MEMBERS) ? usage : undefined;
}

/** A message without tool calls (an empty list of them is kept empty), or undefined. */
function plainMessage(value: unknown): Members | undefined {
  if (!isPlainObject(value)) return undefined;
  const { role } = value;
  if (role !== undefined && !isText(role)) return undefined;
  const message: Members = { role: role ?? 'assistant' };
  if (!copyNullish(message, value, 'content', isText)) return undefined;
  if ('tool_calls' in value) {
    const calls = value['tool_calls'];
    if (Array.isArray(calls) && calls.length === 0) message['tool_calls'] = [];
    else if (calls === null || calls === undefined) message['tool_calls'] = calls;
    else return undefined;
  }
  return copyUndeclared(message, value, MESSAGE_MEMBERS) ? message : undefined;
}

function plainChoice(value: unknown): Members | undefined {
  if (!isPlainObject(value)) return undefined;
  const { index } = value;
  if (index !== undefined && !isNumber(index)) return undefined;
  const message = plainMessage(value['message']);
  if (!message) return undefined;
  const choice: Members = { index: index ?? 0, message };
  if (!copyNullish(choice, value, 'finish_reason', isText)) return undefined;
  return copyUndeclared(choice, value, CHOICE_MEMBERS) ? choice : undefined;
}

/**
 * An OpenAI-format chat answer of the shape nearly every one has (its id, time and model; choices of a message
 * without tool calls; usage), read without the schema: the same values in the same key order as
 * `openAiChatResponseSchema` makes of it, at a fraction of the cost on every answer. Undefined for any other
 * answer, which the schema parses (and refuses when it must), so what an answer that is not plain gets, an
 * error included, is the schema's.
 */
export function plainOpenAiChatAnswer(raw: unknown): OpenAiChatAnswer | undefined {
  if (!isPlainObject(raw)) return undefined;
  const { id, created, model, choices } = raw;
  // The schema stamps an answer without `created` with the time it parsed it: such answers take its way.
  if (!isNumber(created) || !Array.isArray(choices)) return undefined;
  if ((id !== undefined && !isText(id)) || (model !== undefined && !isText(model))) return undefined;
  const answer: Members = { id: id ?? '', created, model: model ?? '' };
  if (!copyNullish(answer, raw, 'system_fingerprint', isText)) return undefined;
  const plainChoices: Members[] = [];
  for (const choice of choices as unknown[]) {
    const plain = plainChoice(choice);
    if (!plain) return undefined;
    plainChoices.push(plain);
  }
  answer['choices'] = plainChoices;
  if ('usage' in raw) {
    const usage = plainUsage(raw['usage']);
    if (usage === undefined && raw['usage'] !== undefined) return undefined;
    answer['usage'] = usage;
  }
  return copyUndeclared(answer, raw, ANSWER_MEMBERS) ? (answer as OpenAiChatAnswer) : undefined;
}
