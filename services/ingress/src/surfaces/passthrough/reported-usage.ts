import type { Usage } from '@gw/shared';

export type Fields = Record<string, unknown>;

export function record(value: unknown): Fields | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Fields) : undefined;
}

export function count(fields: Fields | undefined, name: string): number | undefined {
  const value = fields?.[name];
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : undefined;
}

/** A count kept only when above zero: OpenAI reports zeros for every part a call did not use. */
export const positive = (value: number | undefined) =>
  value === undefined || value === 0 ? undefined : value;

/**
 * The parts of a usage billed at prices of their own: prompt-cache reads and writes, reasoning, audio and images;
 * and what was billed beside tokens.
 */
export interface BilledParts {
  cached?: number | undefined;
  written?: number | undefined;
  /** Of the tokens written, those kept for an hour (Anthropic's `cache_creation`), billed higher. */
  writtenForAnHour?: number | undefined;
  reasoning?: number | undefined;
  /** Audio in the prompt and in the answer (OpenAI's audio and transcription models, Gemini's AUDIO). */
  audioIn?: number | undefined;
  audioOut?: number | undefined;
  /** Images in the prompt and in the answer (OpenAI's image models, Gemini's IMAGE). */
  imageIn?: number | undefined;
  imageOut?: number | undefined;
  /** Seconds of audio transcribed (whisper's `duration` usage, Mistral's `prompt_audio_seconds`). */
  audioSeconds?: number | undefined;
}

export const PART_NAMES = [
  'cached',
  'written',
  'writtenForAnHour',
  'reasoning',
  'audioIn',
  'audioOut',
  'imageIn',
  'imageOut',
  'audioSeconds',
] as const satisfies ReadonlyArray<keyof BilledParts>;

/** A usage as `Usage` says it: the billed parts in its details and units, those not reported left out. */
export function usageOf(prompt: number, completion: number, parts: BilledParts): Usage {
  const usage: Usage = {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
  };
  const promptDetails = {
    ...(parts.cached !== undefined && { cached_tokens: parts.cached }),
    ...(parts.written !== undefined && { cache_write_tokens: parts.written }),
    ...(parts.writtenForAnHour !== undefined && { cache_write_1h_tokens: parts.writtenForAnHour }),
    ...(parts.audioIn !== undefined && { audio_tokens: parts.audioIn }),
    ...(parts.imageIn !== undefined && { image_tokens: parts.imageIn }),
  };
  if (Object.keys(promptDetails).length > 0) usage.prompt_tokens_details = promptDetails;
  const completionDetails = {
    ...(parts.reasoning !== undefined && { reasoning_tokens: parts.reasoning }),
    ...(parts.audioOut !== undefined && { audio_tokens: parts.audioOut }),
    ...(parts.imageOut !== undefined && { image_tokens: parts.imageOut }),
  };
  if (Object.keys(completionDetails).length > 0) usage.completion_tokens_details = completionDetails;
  if (parts.audioSeconds !== undefined) usage.units = { audio_seconds: parts.audioSeconds };
  return usage;
}

/** The billed parts a usage carries, as `usageOf` wrote them. */
export function partsOf(usage: Usage | undefined): BilledParts {
  const prompt = usage?.prompt_tokens_details;
  const completion = usage?.completion_tokens_details;
  return {
    cached: prompt?.cached_tokens,
    written: prompt?.cache_write_tokens,
    writtenForAnHour: prompt?.cache_write_1h_tokens,
    reasoning: completion?.reasoning_tokens,
    audioIn: prompt?.audio_tokens,
    audioOut: completion?.audio_tokens,
    imageIn: prompt?.image_tokens,
    imageOut: completion?.image_tokens,
    audioSeconds: usage?.units?.audio_seconds,
  };
}

/**
 * The billed parts of a usage in whichever provider's names: cache reads (OpenAI's chat and Responses details,
 * Anthropic's, Bedrock's, Cohere's `cached_tokens` beside its counts), cache writes (Anthropic's, Bedrock's),
 * reasoning (OpenAI's chat and Responses details), audio (OpenAI's chat details, its transcriptions'
 * `input_token_details`), images (OpenAI's chat details and its image API's `input_tokens_details`, and
 * `output_tokens_details` where it splits the output) and the seconds of audio transcribed (OpenAI's `duration`
 * usage, Mistral's `prompt_audio_seconds`).
 */
function billedParts(usage: Fields, source: Fields): BilledParts {
  const promptDetails = record(source['prompt_tokens_details']);
  const inputDetails = record(source['input_tokens_details']);
  const completionDetails = record(source['completion_tokens_details']);
  const outputDetails = record(source['output_tokens_details']);
  return {
    cached:
      count(source, 'cache_read_input_tokens') ??
      count(source, 'cacheReadInputTokens') ??
      count(promptDetails, 'cached_tokens') ??
      count(inputDetails, 'cached_tokens') ??
      count(usage, 'cached_tokens'),
    written: count(source, 'cache_creation_input_tokens') ?? count(source, 'cacheWriteInputTokens'),
    writtenForAnHour: count(record(source['cache_creation']), 'ephemeral_1h_input_tokens'),
    reasoning: count(completionDetails, 'reasoning_tokens') ?? count(outputDetails, 'reasoning_tokens'),
    audioIn: positive(
      count(promptDetails, 'audio_tokens') ?? count(record(source['input_token_details']), 'audio_tokens'),
    ),
    audioOut: positive(count(completionDetails, 'audio_tokens')),
    imageIn: positive(count(promptDetails, 'image_tokens') ?? count(inputDetails, 'image_tokens')),
    imageOut: positive(count(completionDetails, 'image_tokens') ?? count(outputDetails, 'image_tokens')),
    audioSeconds: positive(
      (usage['type'] === 'duration' ? (count(usage, 'seconds') ?? count(usage, 'duration')) : undefined) ??
        count(usage, 'prompt_audio_seconds'),
    ),
  };
}

/** The tokens of one modality in Gemini's breakdowns by modality, when there were any. */
function modalityTokens(modality: 'IMAGE' | 'AUDIO', ...breakdowns: unknown[]): number | undefined {
  let tokens = 0;
  for (const breakdown of breakdowns) {
    if (!Array.isArray(breakdown)) continue;
    for (const entry of breakdown) {
      const fields = record(entry);
      if (fields?.['modality'] === modality) tokens += count(fields, 'tokenCount') ?? 0;
    }
  }
  return positive(tokens);
}

/** Gemini's and Vertex's `usageMetadata`: thinking counted as completion, images and audio by modality. */
function geminiUsage(gemini: Fields): Usage {
  const prompt = (count(gemini, 'promptTokenCount') ?? 0) + (count(gemini, 'toolUsePromptTokenCount') ?? 0);
  const completion =
    (count(gemini, 'candidatesTokenCount') ?? 0) + (count(gemini, 'thoughtsTokenCount') ?? 0);
  const promptBreakdowns = [gemini['promptTokensDetails'], gemini['toolUsePromptTokensDetails']];
  return usageOf(prompt, completion, {
    cached: count(gemini, 'cachedContentTokenCount'),
    reasoning: count(gemini, 'thoughtsTokenCount'),
    audioIn: modalityTokens('AUDIO', ...promptBreakdowns),
    imageIn: modalityTokens('IMAGE', ...promptBreakdowns),
    audioOut: modalityTokens('AUDIO', gemini['candidatesTokensDetails']),
    imageOut: modalityTokens('IMAGE', gemini['candidatesTokensDetails']),
  });
}

/**
 * The usage one answer (or one stream event) reports, in whichever provider's shape: OpenAI's chat,
 * completions, embeddings, Responses (`response.usage`), image (`input_tokens_details`) and transcription
 * (`type: 'tokens'` or `'duration'`) usages, Anthropic's (`message.usage` in `message_start`, cache reads and
 * writes counted as prompt), Gemini's and Vertex's `usageMetadata` (thinking counted as completion), Cohere's
 * `usage.billed_units` (what it bills; `tokens` counts its prompt template too) or v1 `meta`, Bedrock's camelCase
 * `usage` (in a stream's `metadata`), Mistral's (`prompt_audio_seconds`) and Ollama's `prompt_eval_count` /
 * `eval_count`; with the parts billed apart where the provider reports them. Undefined when it reports none.
 */
export function reportedUsage(value: Fields): Usage | undefined {
  const gemini = record(value['usageMetadata']);
  if (gemini) return geminiUsage(gemini);
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
  const source = record(usage['billed_units']) ?? record(usage['tokens']) ?? usage;
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
  const parts = billedParts(usage, source);
  if (
    prompt === 0 &&
    completion === 0 &&
    count(source, 'total_tokens') === undefined &&
    parts.audioSeconds === undefined
  ) {
    return undefined;
  }
  return usageOf(prompt, completion, parts);
}
