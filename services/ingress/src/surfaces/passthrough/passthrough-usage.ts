import type { Transform } from 'node:stream';
import { finished } from 'node:stream/promises';
import { createBrotliDecompress, createGunzip, createInflate, createZstdDecompress } from 'node:zlib';
import { type PassthroughOperation, SseParser, type Usage } from '@gw/shared';
import { tokensOfLength } from '../../request/estimate-tokens.ts';
import { LongStringCutter } from './long-string-cutter.ts';
import {
  type BilledParts,
  count,
  type Fields,
  PART_NAMES,
  partsOf,
  positive,
  record,
  reportedUsage,
  usageOf,
} from './reported-usage.ts';

/**
 * Decoded JSON answers whose copy (long strings cut: long-string-cutter.ts) is larger than this are relayed without
 * looking for usage (they are files, not completions).
 */
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

/** The image API: its answers list the images made, and all of their output tokens are image tokens. */
const IMAGE_OPERATIONS = new Set<PassthroughOperation>([
  'images_generations',
  'images_edits',
  'images_variations',
]);

/** The events that end one image of a streamed image answer (`stream: true`). */
const IMAGE_DONE_EVENTS = new Set(['image_generation.completed', 'image_edit.completed']);

/**
 * The states of an OpenAI batch whose usage is final and billed: completed, and expired or cancelled (billed for
 * the requests that completed before, per OpenAI's Batch API FAQ).
 */
const BILLED_BATCH_STATES = new Set(['completed', 'expired', 'cancelled']);

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

/**
 * What the sniffer charges: a `Usage`, marked (`Usage.batch`) as a batch's when it is one: its id, so that a
 * batch read again (every poll of a finished batch answers its usage) is charged once, and the model it ran, when
 * the batch object names it.
 */
type PassthroughUsage = Usage;

/**
 * The usage of an OpenAI batch object (`GET /v1/batches/{id}`) once the batch is finished: its token counts, in the
 * Responses names, marked with the batch. Undefined for one still running, and for one that reports no usage
 * (batches created before September 2025).
 */
function finishedBatchUsage(value: Fields): PassthroughUsage | undefined {
  const id = value['id'];
  const state = value['status'];
  if (value['object'] !== 'batch' || typeof id !== 'string' || typeof state !== 'string') return undefined;
  if (!BILLED_BATCH_STATES.has(state)) return undefined;
  const usage = reportedUsage(value);
  if (!usage) return undefined;
  const model = value['model'];
  return { ...usage, batch: { id, ...(typeof model === 'string' && model && { model }) } };
}

/** The images an answer of the image API made: its `data` list, or one for an event that ends a streamed image. */
function imagesMade(value: Fields): number {
  const data = value['data'];
  if (Array.isArray(data)) return data.filter((item) => record(item) !== undefined).length;
  return typeof value['type'] === 'string' && IMAGE_DONE_EVENTS.has(value['type']) ? 1 : 0;
}

/** The larger of two running counts, either of which may be unreported. */
function larger(seen: number | undefined, reported: number | undefined): number | undefined {
  return seen === undefined ? reported : reported === undefined ? seen : Math.max(seen, reported);
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
 * totals, and those that report once report it last. The images an image answer made are counted apart (a
 * stream ends each of its images with an event of its own), and a batches answer reports only a finished batch.
 */
class UsageMeter {
  private usage: Usage | undefined;
  private images = 0;
  private batch: PassthroughUsage | undefined;
  textChars = 0;
  private readonly operation: PassthroughOperation;

  constructor(operation: PassthroughOperation) {
    this.operation = operation;
  }

  observe(value: unknown): void {
    if (Array.isArray(value)) {
      for (const item of value) this.observe(item);
      return;
    }
    const fields = record(value);
    if (!fields) return;
    if (this.operation === 'batches') {
      this.batch = finishedBatchUsage(fields) ?? this.batch;
      return;
    }
    this.textChars += textLength(fields, 0);
    if (IMAGE_OPERATIONS.has(this.operation)) this.images += imagesMade(fields);
    const reported = reportedUsage(fields);
    const parts = partsOf(reported);
    // The image API's output is the images (gpt-image-1 reports no split); a model that adds text splits it.
    if (IMAGE_OPERATIONS.has(this.operation) && parts.imageOut === undefined)
      parts.imageOut = positive(reported?.completion_tokens);
    // A verbose transcription states the audio's length, with or without a usage saying it.
    if (this.operation === 'audio_transcriptions') parts.audioSeconds ??= positive(count(fields, 'duration'));
    if (!reported && parts.audioSeconds === undefined) return;
    const seen = this.usage;
    this.usage = usageOf(
      Math.max(seen?.prompt_tokens ?? 0, reported?.prompt_tokens ?? 0),
      Math.max(seen?.completion_tokens ?? 0, reported?.completion_tokens ?? 0),
      largerParts(partsOf(seen), parts),
    );
  }

  observeText(text: string): void {
    const trimmed = text.trimStart();
    if (!trimmed.startsWith('{') && !trimmed.startsWith('[')) return;
    try {
      this.observe(JSON.parse(trimmed));
    } catch {}
  }

  /** The usage the answer reported, with the images it made; undefined when it reported neither. */
  reported(): PassthroughUsage | undefined {
    if (this.operation === 'batches') return this.batch;
    if (this.images === 0) return this.usage;
    const usage = this.usage ?? usageOf(0, 0, {});
    return { ...usage, units: { ...usage.units, images: this.images } };
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
    let copy: LongStringCutter | undefined = new LongStringCutter();
    return {
      push(chunk) {
        copy?.push(chunk);
        if (copy && copy.size > JSON_SNIFF_LIMIT) copy = undefined;
      },
      end() {
        if (!copy) return;
        const text = copy.text();
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

/** The characters a speech request asks to be spoken (tts-1 bills them): its `input`, counted by code point. */
function spokenCharacters(json: Record<string, unknown> | undefined): number | undefined {
  const input = json?.['input'];
  return typeof input === 'string' && input.length > 0 ? [...input].length : undefined;
}

export interface UsageSniffer {
  /** A chunk of the answer as relayed (still compressed when it came so). */
  push(chunk: Uint8Array): void;
  /** The usage to charge once the answer's body has been relayed (or the relay stopped). */
  finish(): Promise<PassthroughUsage | undefined>;
}

/**
 * Watches the bytes of a pass-through answer go by and works out what to charge for it: the usage the answer
 * reports, read from a decoded copy whatever its encoding (gzip, deflate, br, zstd) and provider shape, with what
 * is billed beside tokens (`units`: the images an image answer made, the seconds of audio a transcription
 * reports, the characters a speech request asked for); else, for an answer a model generated, an estimate from
 * what was relayed (the prompt's estimate plus about four characters a token of the text relayed, at least one),
 * so nothing served is charged zero. Listings, files, batches (but for a finished batch's usage) and error answers
 * that report no usage are charged nothing.
 */
export function createUsageSniffer(
  answer: { status: number; headers: Record<string, string | string[]> },
  call: {
    operation: PassthroughOperation;
    method: string;
    promptTokens: number;
    /** The request's JSON body, when it had one. */
    json?: Record<string, unknown> | undefined;
  },
): UsageSniffer {
  const type = String(answer.headers['content-type'] ?? '').toLowerCase();
  const encoding = String(answer.headers['content-encoding'] ?? 'identity')
    .toLowerCase()
    .trim();
  const meter = new UsageMeter(call.operation);
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
      const served = relayed > 0 && answer.status < 400;
      // Speech is billed by the characters asked for; its answer is the audio, which reports nothing.
      const characters =
        served && call.operation === 'audio_speech' ? spokenCharacters(call.json) : undefined;
      if (characters !== undefined) {
        const usage = reported ?? usageOf(0, 0, {});
        return { ...usage, units: { ...usage.units, characters } };
      }
      if (reported) return reported;
      if (!served) return undefined;
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
