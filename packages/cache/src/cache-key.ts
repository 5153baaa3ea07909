import { hash } from 'node:crypto';
import type { ContentPart, Message } from '@gw/shared';

/** What decides a chat or text answer: the request as the router will be asked it. */
export interface CacheKeyInput {
  provider: string;
  model: string;
  messages?: readonly Message[] | undefined;
  /** Text completions' prompt. */
  prompt?: string | readonly string[] | undefined;
  /** Every param of the request (tools and tool_choice included), as `ParsedCompletion.params` holds them. */
  params: Readonly<Record<string, unknown>>;
}

export interface CacheKeyOptions {
  /**
   * Leave provider and model out of the key, so an answer is shared by every model (a deployment that treats
   * its models as interchangeable). False by default: different models give different answers.
   */
  ignoreModel?: boolean;
  /**
   * The embedding model the semantic vectors come from: part of the context, since vectors of two models live
   * in different spaces and must never be compared.
   */
  embeddingModel?: string;
  /** The caller's own cache key (a request header): replaces the computed exact hash. */
  callerKey?: string | undefined;
}

/** The two hashes of a request (hex sha256). */
export interface CacheKeys {
  /** Equal for requests that must get the same answer: exact matches are looked up by it. */
  exact: string;
  /**
   * Everything but the conversation turns (provider, model, params, tools, system prompt, embedding model):
   * a semantic match is only looked for among entries of the same context, so a neighbour asked with other
   * params, tools or instructions is never served.
   */
  context: string;
}

/**
 * Params that never change the answer, left out of the key. Everything else is in it: a param gw does not
 * know may change the answer, and keying on it costs at most a miss, where leaving it out could serve a wrong
 * answer. `stream` is here so a streamed request finds a whole answer and the other way round.
 */
const ANSWER_NEUTRAL_PARAMS: ReadonlySet<string> = new Set([
  'stream',
  'stream_options',
  'user',
  'metadata',
  'store',
  'service_tier',
  'prompt_cache_key',
  'safety_identifier',
]);

/** Roles whose messages are instructions rather than turns: they belong to the context, not the embedding. */
const INSTRUCTION_ROLES: ReadonlySet<Message['role']> = new Set(['system', 'developer']);

/** Both hashes of a request. */
export function cacheKeys(input: CacheKeyInput, options: CacheKeyOptions = {}): CacheKeys {
  return { exact: exactHash(input, options), context: contextHash(input, options) };
}

/** The exact hash alone (`cacheKeys(…).exact`): what a lookup without a semantic match needs. */
export function exactHash(input: CacheKeyInput, options: CacheKeyOptions = {}): string {
  if (options.callerKey !== undefined) return callerKeyHash(options.callerKey);
  const target = options.ignoreModel ? {} : { provider: input.provider, model: input.model };
  const params = answerParams(input.params);
  return sha256(canonicalJson({ ...target, messages: input.messages, prompt: input.prompt, params }));
}

/** The context hash alone (`cacheKeys(…).context`): needed only for a semantic match or its entry. */
export function contextHash(input: CacheKeyInput, options: CacheKeyOptions = {}): string {
  const target = options.ignoreModel ? {} : { provider: input.provider, model: input.model };
  const instructions = input.messages?.filter((message) => INSTRUCTION_ROLES.has(message.role));
  const params = answerParams(input.params);
  return sha256(canonicalJson({ ...target, instructions, params, embedding_model: options.embeddingModel }));
}

/** The exact hash a caller-given cache key stands for (the admin API clears "a cache key" by it). */
export function callerKeyHash(callerKey: string): string {
  return sha256(`caller-key\n${callerKey}`);
}

function answerParams(params: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const kept: Record<string, unknown> = {};
  for (const name in params) if (!ANSWER_NEUTRAL_PARAMS.has(name)) kept[name] = params[name];
  return kept;
}

/** One-shot hashing: a third of createHash's cost, which builds a Hash object per call. */
function sha256(text: string): string {
  return hash('sha256', text, 'hex');
}

/**
 * JSON with every object's keys sorted, so equal values give equal text whatever order their keys came in.
 * Undefined members are left out (as JSON.stringify does); arrays keep their order, which is meaningful.
 */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) {
    return `[${value.map((item: unknown) => (item === undefined ? 'null' : canonicalJson(item))).join(',')}]`;
  }
  const record = value as Record<string, unknown>;
  const members: string[] = [];
  for (const key of Object.keys(record).sort()) {
    const member = record[key];
    if (member === undefined || typeof member === 'function') continue;
    members.push(`${JSON.stringify(key)}:${canonicalJson(member)}`);
  }
  return `{${members.join(',')}}`;
}

export interface SemanticEligibilityOptions {
  /** Most turns (messages other than system and developer) a conversation may have; 3 by default. */
  maxTurns?: number;
  /** Match conversations that carry tool results; false by default (a tool's result is data, not wording). */
  allowToolResults?: boolean;
}

export type SemanticEligibility =
  | { eligible: true; text: string }
  | { eligible: false; reason: 'no_turns' | 'too_many_turns' | 'tool_results' | 'non_text_content' };

const DEFAULT_MAX_TURNS = 3;

/**
 * Whether a conversation may be matched semantically, and the text to embed when it may: its turns, one
 * `role: text` line each (instructions are in the context hash instead, so a long shared system prompt does
 * not make every question look alike). A conversation with images, audio or files is never matched: the
 * embedding would not see them, and two questions about different images would look equal.
 */
export function semanticEligibility(
  messages: readonly Message[],
  options: SemanticEligibilityOptions = {},
): SemanticEligibility {
  const turns = messages.filter((message) => !INSTRUCTION_ROLES.has(message.role));
  if (turns.length === 0) return { eligible: false, reason: 'no_turns' };
  if (turns.length > (options.maxTurns ?? DEFAULT_MAX_TURNS))
    return { eligible: false, reason: 'too_many_turns' };
  const lines: string[] = [];
  for (const turn of turns) {
    if (!options.allowToolResults && (turn.role === 'tool' || turn.role === 'function')) {
      return { eligible: false, reason: 'tool_results' };
    }
    const text = textOf(turn.content);
    if (text === undefined) return { eligible: false, reason: 'non_text_content' };
    const calls = turn.tool_calls?.map((call) => `${call.function.name}(${call.function.arguments})`) ?? [];
    lines.push(`${turn.role}: ${[text, ...calls].filter(Boolean).join('\n')}`);
  }
  return { eligible: true, text: lines.join('\n') };
}

/** The text of a message's content; undefined when a part is not text. */
function textOf(content: Message['content']): string | undefined {
  if (content === undefined || content === null) return '';
  if (typeof content === 'string') return content;
  const texts: string[] = [];
  for (const part of content as ContentPart[]) {
    if (part.type !== 'text' || typeof part['text'] !== 'string') return undefined;
    texts.push(part['text']);
  }
  return texts.join('\n');
}
