import { type ChatCompletionChunk, GatewayError, isPlainObject, type SseEvent, type Usage } from '@gw/shared';
import { type AdapterContext, type StreamPiece, VerbatimChunk } from '../adapter.ts';
import { type ErrorMessageReader, invalidUpstreamBody, parseEventJson } from '../upstream-call.ts';
import { mapOpenAiFinishReason } from './map-openai-finish-reason.ts';
import { toolCallArguments } from './map-openai-response.ts';
import { mapOpenAiUsage } from './map-openai-usage.ts';
import { type OpenAiChunk, type OpenAiUsage, openAiChunkSchema } from './openai-schemas.ts';

type ChunkChoice = ChatCompletionChunk['choices'][number];
type ToolCallDelta = NonNullable<NonNullable<ChunkChoice['delta']>['tool_calls']>[number];

export interface MapOpenAiStreamOptions {
  context: AdapterContext;
  /** `chat.completion.chunk` for chat, `text_completion` for legacy text completions. */
  object: ChatCompletionChunk['object'];
  readMessage: ErrorMessageReader;
  /** Where the provider reports usage when not in the chunk's `usage` (groq's `x_groq.usage`). */
  readChunkUsage?: (chunk: OpenAiChunk) => OpenAiUsage | null | undefined;
  /** The provider's usage mapping (Mistral's); OpenAI's by default. */
  mapUsage?: (usage: OpenAiUsage | null | undefined) => Usage;
}

/**
 * Turns an OpenAI-format event stream into gw's normalised chunks, evening out what compatible servers do
 * differently: chunks without choices (azure's prompt-filter preamble, usage-only chunks) are not passed on,
 * usage is held back and sent once in a final `choices: []` chunk (mistral and groq put it on the finish
 * chunk), and a tool call sent whole in one delta (mistral, groq, ollama) is split into its opening and
 * its arguments, as OpenAI streams it. An event that already is a normalised chunk (OpenAI's own, nearly every
 * one) is passed on as it came, with its text (VerbatimChunk): so is the final usage chunk when its usage is
 * what gw would have made of it.
 */
export async function* mapOpenAiStream(
  events: AsyncIterable<SseEvent>,
  options: MapOpenAiStreamOptions,
): AsyncGenerator<StreamPiece> {
  const { context } = options;
  let usage: OpenAiUsage | undefined;
  /** The event that brought `usage`, when it was the usage chunk gw sends and nothing came after it. */
  let usageEvent: { chunk: ChatCompletionChunk; json: string } | undefined;
  let header = { id: '', created: 0, model: '' };
  for await (const event of events) {
    if (event.data === '[DONE]') break;
    const payload = parseEventJson(context.provider, event.data);
    if (isErrorPayload(payload)) throw streamError(context, payload, options.readMessage);
    usageEvent = undefined;
    // Groq's usage is read from the whole parsed chunk: its chunks take the schema's way.
    const relayable = !options.readChunkUsage && asSent(payload, options.object, event.data);
    if (relayable === 'chunk') {
      const chunk = payload as ChatCompletionChunk;
      header = { id: chunk.id, created: chunk.created, model: chunk.model };
      yield new VerbatimChunk(chunk, event.data);
      continue;
    }
    const plain = options.readChunkUsage ? undefined : plainChunk(payload);
    if (plain) {
      header = {
        id: plain.id || header.id,
        created: plain.created || header.created,
        model: plain.model || header.model,
      };
      if (plain.choices.length > 0) yield { ...header, object: options.object, choices: plain.choices };
      continue;
    }
    const parsed = openAiChunkSchema.safeParse(payload);
    if (!parsed.success)
      throw invalidUpstreamBody(context.provider, 'stream carried a chunk of unexpected shape');
    const chunk = parsed.data;
    header = {
      id: chunk.id || header.id,
      created: chunk.created || header.created,
      model: chunk.model || header.model,
    };
    usage = options.readChunkUsage?.(chunk) ?? chunk.usage ?? usage;
    if (relayable === 'usage') usageEvent = { chunk: payload as ChatCompletionChunk, json: event.data };
    if (chunk.choices.length === 0) continue;
    for (const choices of splitWholeToolCalls(chunk.choices.map(normaliseChoice))) {
      yield { ...header, object: options.object, choices };
    }
  }
  if (!usage) return;
  const mapped = (options.mapUsage ?? mapOpenAiUsage)(usage);
  // The same members in the same order: what the caller reads is what gw bills.
  if (usageEvent && JSON.stringify(mapped) === JSON.stringify(usageEvent.chunk.usage))
    yield new VerbatimChunk(usageEvent.chunk, usageEvent.json);
  else yield { ...header, object: options.object, choices: [], usage: mapped };
}

const FINISH_REASONS = new Set<unknown>([null, 'stop', 'length', 'tool_calls', 'content_filter']);

/**
 * Whether an event already is what gw makes of it, so that its parsed payload is the chunk and its text goes
 * out as it came: `chunk` for one with choices and no usage, `usage` for a usage chunk (`choices: []`, its
 * usage still to be compared with gw's mapping of it), false for any other (its text is then not one
 * `data:` line, or its header, a choice or a finish reason is one gw fills in, drops or maps).
 */
function asSent(payload: unknown, object: string, text: string): 'chunk' | 'usage' | false {
  if (!isPlainObject(payload) || text.includes('\n')) return false;
  const { id, created, model, choices, usage } = payload;
  if (payload['object'] !== object || typeof id !== 'string' || id === '') return false;
  if (typeof model !== 'string' || model === '' || typeof created !== 'number' || created === 0) return false;
  if (!Array.isArray(choices)) return false;
  if (choices.length === 0) return isPlainObject(usage) ? 'usage' : false;
  if (usage !== undefined && usage !== null) return false;
  for (const choice of choices as unknown[]) if (!choiceAsSent(choice)) return false;
  return 'chunk';
}

/** A choice as normaliseChoice leaves it: its index, a finish reason gw's own, a text or a delta without tool calls. */
function choiceAsSent(choice: unknown): boolean {
  if (!isPlainObject(choice) || typeof choice['index'] !== 'number') return false;
  if (!FINISH_REASONS.has(choice['finish_reason'])) return false;
  const { delta, text } = choice;
  if (text !== undefined && typeof text !== 'string') return false;
  if (delta !== undefined && (!isPlainObject(delta) || delta['tool_calls'] !== undefined)) return false;
  // The schema drops a `__proto__` member: such a choice takes its way.
  return !Object.hasOwn(choice, '__proto__');
}

function normaliseChoice(choice: OpenAiChunk['choices'][number]): ChunkChoice {
  const { tool_calls: toolCalls, ...delta } = choice.delta ?? {};
  // A null `delta` or `text` (some OpenAI-compatible servers send them) is left out: gw's chunk has none.
  const { delta: _upstreamDelta, text, ...members } = choice;
  const normalised: ChunkChoice = { ...members, finish_reason: mapOpenAiFinishReason(choice.finish_reason) };
  if (typeof text === 'string') normalised.text = text;
  if (choice.delta) {
    normalised.delta = delta as ChunkChoice['delta'];
    if (toolCalls?.length) {
      normalised.delta!.tool_calls = toolCalls.map((call, position): ToolCallDelta => {
        const mapped: ToolCallDelta = { index: call.index ?? position };
        if (call.id) mapped.id = call.id;
        if (call.id || call.type) mapped.type = 'function';
        if (call.function) {
          mapped.function = { arguments: toolCallArguments(call.function.arguments) };
          if (call.function.name) mapped.function.name = call.function.name;
        }
        return mapped;
      });
    }
  }
  return normalised;
}

/** The members of a chunk's choice that plainChoice reads; the others pass through as they came. */
const CHOICE_MEMBERS = new Set(['index', 'delta', 'text', 'finish_reason']);

function isTextOrAbsent(value: unknown): boolean {
  return value === undefined || value === null || typeof value === 'string';
}

/**
 * The header and normalised choices of a chunk of the shape nearly every chunk has (no usage, no tool calls,
 * each choice with its index), read without the schema: the same values in the same key order as
 * `openAiChunkSchema` then normaliseChoice make, at a fraction of the cost on every chunk of every stream.
 * Undefined for any other chunk, which the schema parses (and refuses when it must).
 */
function plainChunk(
  payload: unknown,
): { id: string; created: number; model: string; choices: ChunkChoice[] } | undefined {
  if (!isPlainObject(payload)) return undefined;
  const { id, object, created, model, choices, usage } = payload;
  if (typeof id !== 'string' || typeof created !== 'number' || typeof model !== 'string') return undefined;
  if (!isTextOrAbsent(object) || (usage !== undefined && usage !== null) || !Array.isArray(choices))
    return undefined;
  const normalised: ChunkChoice[] = [];
  for (const choice of choices as unknown[]) {
    const plain = plainChoice(choice);
    if (!plain) return undefined;
    normalised.push(plain);
  }
  return { id, created, model, choices: normalised };
}

/** One choice as normaliseChoice makes it from the schema's parse, or undefined when it is not plain. */
function plainChoice(choice: unknown): ChunkChoice | undefined {
  if (!isPlainObject(choice)) return undefined;
  const members = choice;
  const { index, delta, text } = members;
  const finishReason = members['finish_reason'];
  if (typeof index !== 'number' || !isTextOrAbsent(text) || !isTextOrAbsent(finishReason)) return undefined;
  if (delta !== undefined && delta !== null) {
    if (!isPlainObject(delta) || delta['tool_calls'] !== undefined) return undefined;
  }
  // The schema puts its own members first (index, then finish_reason when sent), then the others as sent.
  const normalised: Record<string, unknown> = { index };
  if ('finish_reason' in members) normalised['finish_reason'] = null;
  for (const name in members) {
    if (CHOICE_MEMBERS.has(name)) continue;
    // The schema drops a `__proto__` member; assigned here it would become the choice's prototype.
    if (name === '__proto__') return undefined;
    normalised[name] = members[name];
  }
  normalised['finish_reason'] = mapOpenAiFinishReason(finishReason as string | null | undefined);
  if (typeof text === 'string') normalised['text'] = text;
  if (delta) normalised['delta'] = delta;
  return normalised as unknown as ChunkChoice;
}

/** A call opening (it has an id) that already carries arguments. */
function isWhole(call: ToolCallDelta): boolean {
  return Boolean(call.id && call.function?.arguments);
}

/** One chunk's choices, or two when whole tool calls must be split into opening and arguments. */
function splitWholeToolCalls(choices: ChunkChoice[]): ChunkChoice[][] {
  if (!choices.some((choice) => choice.delta?.tool_calls?.some(isWhole))) return [choices];
  const openings: ChunkChoice[] = [];
  const fragments: ChunkChoice[] = [];
  for (const choice of choices) {
    const calls = choice.delta?.tool_calls;
    if (!calls?.some(isWhole)) {
      openings.push(choice);
      continue;
    }
    openings.push({
      ...choice,
      delta: {
        ...choice.delta,
        tool_calls: calls.map((call) =>
          isWhole(call) ? { ...call, function: { ...call.function, arguments: '' } } : call,
        ),
      },
      finish_reason: null,
    });
    fragments.push({
      index: choice.index,
      delta: {
        tool_calls: calls
          .filter(isWhole)
          .map((call) => ({ index: call.index, function: { arguments: call.function!.arguments } })),
      },
      finish_reason: choice.finish_reason,
    });
  }
  return [openings, fragments];
}

function isErrorPayload(payload: unknown): payload is Record<string, unknown> {
  if (typeof payload !== 'object' || payload === null) return false;
  return 'error' in payload || (payload as { object?: unknown }).object === 'error';
}

/** The status an error event states (sglang's `code: 400`), when it is an HTTP error status. */
function statedStatus(payload: Record<string, unknown>): number | undefined {
  const error = payload['error'];
  const code =
    typeof error === 'object' && error !== null ? (error as { code?: unknown }).code : payload['code'];
  const status = typeof code === 'string' ? Number(code) : code;
  return typeof status === 'number' && status >= 400 && status <= 599 ? status : undefined;
}

/** An error event inside a stream that had already started. */
function streamError(
  context: AdapterContext,
  payload: Record<string, unknown>,
  readMessage: ErrorMessageReader,
): GatewayError {
  return new GatewayError({
    type: 'upstream_error',
    status: statedStatus(payload) ?? 502,
    message: readMessage(payload) ?? `${context.provider} stream failed`,
    upstream: true,
    upstreamBody: payload,
    provider: context.provider,
  });
}
