import type { Transform } from 'node:stream';
import { finished } from 'node:stream/promises';
import { createBrotliDecompress, createGunzip, createInflate, createZstdDecompress } from 'node:zlib';
import { type PassthroughOperation, SseParser, type Usage } from '@gw/shared';
import { tokensOfLength } from '../../request/estimate-tokens.ts';

/** Decoded JSON answers larger than this are relayed without looking for usage (they are files, not completions). */
const JSON_SNIFF_LIMIT = 1024 * 1024;

/** Nesting gw walks into an answer to find the text it relayed. */
const TEXT_DEPTH = 16;

/** Operations whose answers a model produced: one served without a usage report is charged an estimate. */
const GENERATING = new Set<PassthroughOperation>([
  'completions',
  'responses',
  'embeddings',
  'images_generations',
  'images_edits',
  'images_variations',
  'audio_speech',
  'audio_transcriptions',
  'videos',
]);

/** Fields under which the providers' answers carry generated text (whole or as a stream's delta). */
const TEXT_FIELDS = new Set([
  'content',
  'text',
  'delta',
  'arguments',
  'partial_json',
  'thinking',
  'refusal',
  'reasoning_content',
  'output_text',
  'response',
]);

const DECODERS: Record<string, () => Transform> = {
  gzip: createGunzip,
  'x-gzip': createGunzip,
  deflate: createInflate,
  br: createBrotliDecompress,
  zstd: createZstdDecompress,
};

type Fields = Record<string, unknown>;

function record(value: unknown): Fields | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Fields) : undefined;
}

function count(fields: Fields | undefined, name: string): number | undefined {
  const value = fields?.[name];
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : undefined;
}

/** The parts of a usage billed at prices of their own: prompt-cache reads and writes, and reasoning. */
interface BilledParts {
  cached?: number | undefined;
  written?: number | undefined;
  /** Of the tokens written, those kept for an hour (Anthropic's `cache_creation`), billed higher. */
  writtenForAnHour?: number | undefined;
  reasoning?: number | undefined;
  /** Audio in the prompt and in the answer (OpenAI's audio models), billed at audio prices. */
  audioIn?: number | undefined;
  audioOut?: number | undefined;
}

/** A usage as `Usage` says it: the billed parts in its details, those the answer did not report left out. */
function usageOf(prompt: number, completion: number, parts: BilledParts): Usage {
  const usage: Usage = {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
  };
  if (parts.cached !== undefined || parts.written !== undefined || parts.audioIn !== undefined) {
    usage.prompt_tokens_details = {
      ...(parts.cached !== undefined && { cached_tokens: parts.cached }),
      ...(parts.written !== undefined && { cache_write_tokens: parts.written }),
      ...(parts.writtenForAnHour !== undefined && { cache_write_1h_tokens: parts.writtenForAnHour }),
      ...(parts.audioIn !== undefined && { audio_tokens: parts.audioIn }),
    };
  }
  if (parts.reasoning !== undefined || parts.audioOut !== undefined) {
    usage.completion_tokens_details = {
      ...(parts.reasoning !== undefined && { reasoning_tokens: parts.reasoning }),
      ...(parts.audioOut !== undefined && { audio_tokens: parts.audioOut }),
    };
  }
  return usage;
}

/**
 * The billed parts of a usage in whichever provider's names: cache reads (OpenAI's chat and Responses details,
 * Anthropic's, Bedrock's, Cohere's `cached_tokens` beside its counts), cache writes (Anthropic's, Bedrock's) and
 * reasoning (OpenAI's chat and Responses details).
 */
function billedParts(usage: Fields, source: Fields): BilledParts {
  return {
    cached:
      count(source, 'cache_read_input_tokens') ??
      count(source, 'cacheReadInputTokens') ??
      count(record(source['prompt_tokens_details']), 'cached_tokens') ??
      count(record(source['input_tokens_details']), 'cached_tokens') ??
      count(usage, 'cached_tokens'),
    written: count(source, 'cache_creation_input_tokens') ?? count(source, 'cacheWriteInputTokens'),
    writtenForAnHour: count(record(source['cache_creation']), 'ephemeral_1h_input_tokens'),
    reasoning:
      count(record(source['completion_tokens_details']), 'reasoning_tokens') ??
      count(record(source['output_tokens_details']), 'reasoning_tokens'),
    // OpenAI reports 0 audio for every text answer: only audio that was there is kept.
    audioIn: positive(count(record(source['prompt_tokens_details']), 'audio_tokens')),
    audioOut: positive(count(record(source['completion_tokens_details']), 'audio_tokens')),
  };
}

const positive = (value: number | undefined) => (value === undefined || value === 0 ? undefined : value);

/**
 * The usage one answer (or one stream event) reports, in whichever provider's shape: OpenAI's chat,
 * completions, embeddings and Responses (`response.usage`), Anthropic's (`message.usage` in `message_start`,
 * cache reads and writes counted as prompt), Gemini's and Vertex's `usageMetadata` (thinking counted as
 * completion), Cohere's `usage.tokens` / `billed_units` (v1: `meta`), Bedrock's camelCase `usage` (in a
 * stream's `metadata`) and Ollama's `prompt_eval_count` / `eval_count`; with the parts billed apart (cache
 * reads and writes, reasoning) where the provider reports them. Undefined when it reports none.
 */
function reportedUsage(value: Fields): Usage | undefined {
  const gemini = record(value['usageMetadata']);
  if (gemini) {
    const prompt = (count(gemini, 'promptTokenCount') ?? 0) + (count(gemini, 'toolUsePromptTokenCount') ?? 0);
    const completion =
      (count(gemini, 'candidatesTokenCount') ?? 0) + (count(gemini, 'thoughtsTokenCount') ?? 0);
    return usageOf(prompt, completion, {
      cached: count(gemini, 'cachedContentTokenCount'),
      reasoning: count(gemini, 'thoughtsTokenCount'),
    });
  }
  if (count(value, 'prompt_eval_count') !== undefined || count(value, 'eval_count') !== undefined) {
    const prompt = count(value, 'prompt_eval_count') ?? 0;
    const completion = count(value, 'eval_count') ?? 0;
    return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
  }
  const usage =
    record(value['usage']) ??
    record(record(value['response'])?.['usage']) ??
    record(record(value['message'])?.['usage']) ??
    record(record(value['metadata'])?.['usage']) ??
    record(value['meta']);
  if (!usage) return undefined;
  const tokens = record(usage['tokens']) ?? record(usage['billed_units']);
  const source = tokens ?? usage;
  const prompt =
    count(source, 'prompt_tokens') ??
    (count(source, 'input_tokens') ?? count(source, 'inputTokens') ?? 0) +
      (count(source, 'cache_read_input_tokens') ?? count(source, 'cacheReadInputTokens') ?? 0) +
      (count(source, 'cache_creation_input_tokens') ?? count(source, 'cacheWriteInputTokens') ?? 0);
  const completion =
    count(source, 'completion_tokens') ??
    count(source, 'output_tokens') ??
    count(source, 'outputTokens') ??
    0;
  if (prompt === 0 && completion === 0 && count(source, 'total_tokens') === undefined) return undefined;
  return usageOf(prompt, completion, billedParts(usage, source));
}

/** The larger of two running counts, either of which may be unreported. */
function larger(seen: number | undefined, reported: number | undefined): number | undefined {
  return seen === undefined ? reported : reported === undefined ? seen : Math.max(seen, reported);
}

const PART_NAMES = [
  'cached',
  'written',
  'writtenForAnHour',
  'reasoning',
  'audioIn',
  'audioOut',
] as const satisfies ReadonlyArray<keyof BilledParts>;

/** The billed parts a usage carries, as `usageOf` wrote them. */
function partsOf(usage: Usage | undefined): BilledParts {
  const prompt = usage?.prompt_tokens_details;
  const completion = usage?.completion_tokens_details;
  return {
    cached: prompt?.cached_tokens,
    written: prompt?.cache_write_tokens,
    writtenForAnHour: prompt?.cache_write_1h_tokens,
    reasoning: completion?.reasoning_tokens,
    audioIn: prompt?.audio_tokens,
    audioOut: completion?.audio_tokens,
  };
}

/** Running totals: each part the larger of what was seen and what an event reports. */
function largerParts(seen: BilledParts, reported: BilledParts): BilledParts {
  const parts: BilledParts = {};
  for (const name of PART_NAMES) parts[name] = larger(seen[name], reported[name]);
  return parts;
}

/** Characters of generated text in an answer or event, for the estimate when no usage is reported. */
function textLength(value: unknown, depth: number): number {
  if (depth > TEXT_DEPTH || typeof value !== 'object' || value === null) return 0;
  let total = 0;
  if (Array.isArray(value)) {
    for (const item of value) total += textLength(item, depth + 1);
    return total;
  }
  for (const [name, field] of Object.entries(value)) {
    if (typeof field === 'string') {
      if (TEXT_FIELDS.has(name)) total += field.length;
    } else {
      total += textLength(field, depth + 1);
    }
  }
  return total;
}

/**
 * What an answer reported across its events: each count is the largest seen, since providers that report
 * more than once (Anthropic's `message_start` then `message_delta`, Gemini's every chunk) report running
 * totals, and those that report once report it last.
 */
class UsageMeter {
  private usage: Usage | undefined;
  textChars = 0;

  observe(value: unknown): void {
    if (Array.isArray(value)) {
      for (const item of value) this.observe(item);
      return;
    }
    const fields = record(value);
    if (!fields) return;
    this.textChars += textLength(fields, 0);
    const reported = reportedUsage(fields);
    if (!reported) return;
    const seen = this.usage;
    this.usage = usageOf(
      Math.max(seen?.prompt_tokens ?? 0, reported.prompt_tokens),
      Math.max(seen?.completion_tokens ?? 0, reported.completion_tokens),
      largerParts(partsOf(seen), partsOf(reported)),
    );
  }

  observeText(text: string): void {
    const trimmed = text.trimStart();
    if (!trimmed.startsWith('{') && !trimmed.startsWith('[')) return;
    try {
      this.observe(JSON.parse(trimmed));
    } catch {}
  }

  reported(): Usage | undefined {
    return this.usage;
  }
}

/** Reads decoded bytes by the answer's content type: a stream event by event, JSON (and NDJSON) once whole. */
function contentReader(type: string, meter: UsageMeter): { push(chunk: Buffer): void; end(): void } {
  if (type.startsWith('text/event-stream')) {
    const parser = new SseParser();
    let readable = true;
    return {
      push(chunk) {
        if (!readable) return;
        try {
          for (const event of parser.push(chunk)) meter.observeText(event.data);
        } catch {
          // An event past the parser's bound: the rest of the answer is relayed unread (and estimated).
          readable = false;
        }
      },
      end() {},
    };
  }
  if (/^application\/((.+\+)?json|x-ndjson|jsonl)/.test(type)) {
    const chunks: Buffer[] = [];
    let size = 0;
    return {
      push(chunk) {
        size += chunk.byteLength;
        if (size <= JSON_SNIFF_LIMIT) chunks.push(chunk);
        else chunks.length = 0;
      },
      end() {
        if (size > JSON_SNIFF_LIMIT) return;
        const text = Buffer.concat(chunks).toString('utf8');
        try {
          meter.observe(JSON.parse(text));
        } catch {
          // Ollama streams newline-delimited JSON under application/x-ndjson (and some under application/json).
          for (const line of text.split('\n')) meter.observeText(line);
        }
      },
    };
  }
  return { push() {}, end() {} };
}

export interface UsageSniffer {
  /** A chunk of the answer as relayed (still compressed when it came so). */
  push(chunk: Uint8Array): void;
  /** The usage to charge once the answer's body has been relayed (or the relay stopped). */
  finish(): Promise<Usage | undefined>;
}

/**
 * Watches the bytes of a pass-through answer go by and works out what to charge for it: the usage the answer
 * reports, read from a decoded copy whatever its encoding (gzip, deflate, br, zstd) and provider shape; else,
 * for an answer a model generated, an estimate from what was relayed (the prompt's estimate plus about four
 * characters a token of the text relayed, at least one), so nothing served is charged zero. Listings, files and
 * error answers that report no usage are charged nothing.
 */
export function createUsageSniffer(
  answer: { status: number; headers: Record<string, string | string[]> },
  call: { operation: PassthroughOperation; method: string; promptTokens: number },
): UsageSniffer {
  const type = String(answer.headers['content-type'] ?? '').toLowerCase();
  const encoding = String(answer.headers['content-encoding'] ?? 'identity')
    .toLowerCase()
    .trim();
  const meter = new UsageMeter();
  const reader = contentReader(type, meter);
  let relayed = 0;
  const createDecoder = DECODERS[encoding];
  const decoder = createDecoder?.();
  let decoded: Promise<void> = Promise.resolve();
  if (decoder) {
    decoder.on('data', (chunk: Buffer) => reader.push(chunk));
    // A corrupt compressed answer reports nothing; it is then charged an estimate like any silent one.
    decoded = finished(decoder).catch(() => {});
  }
  const readable = decoder !== undefined || encoding === 'identity';
  return {
    push(chunk) {
      relayed += chunk.byteLength;
      if (decoder) {
        if (!decoder.destroyed) decoder.write(chunk);
      } else if (readable) {
        reader.push(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength));
      }
    },
    async finish() {
      if (decoder) {
        decoder.end();
        await decoded;
      }
      reader.end();
      const reported = meter.reported();
      if (reported) return reported;
      if (relayed === 0 || answer.status >= 400) return undefined;
      if (call.method !== 'POST' || !GENERATING.has(call.operation)) return undefined;
      const completion = Math.max(1, tokensOfLength(meter.textChars));
      return {
        prompt_tokens: call.promptTokens,
        completion_tokens: completion,
        total_tokens: call.promptTokens + completion,
      };
    },
  };
}
