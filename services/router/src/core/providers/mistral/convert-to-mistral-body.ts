import type { Message } from '@gw/shared';
import type { OpenAiOperation } from '../openai/openai-adapter.ts';
import { convertToMistralMessages } from './convert-to-mistral-messages.ts';

/**
 * OpenAI params Mistral has no field for. Mistral answers any unknown field with a 422, so these are left
 * out rather than passed through; Mistral's own params (safe_prompt, prompt_mode, prediction) still are.
 */
const UNSUPPORTED_PARAMS = [
  'user',
  'stream_options',
  'logprobs',
  'top_logprobs',
  'logit_bias',
  'store',
  'metadata',
  'service_tier',
  'modalities',
  'audio',
  'reasoning_effort',
] as const;

/** The OpenAI-format body as Mistral takes it: its names for seed and the forced tool choice. */
export function convertToMistralBody(
  body: Record<string, unknown>,
  operation: OpenAiOperation,
): Record<string, unknown> {
  const converted = { ...body };
  for (const name of UNSUPPORTED_PARAMS) delete converted[name];
  if (operation === 'embeddings') {
    if (converted['dimensions'] !== undefined && converted['output_dimension'] === undefined) {
      converted['output_dimension'] = converted['dimensions'];
    }
    delete converted['dimensions'];
    return converted;
  }
  rename(converted, 'seed', 'random_seed');
  rename(converted, 'max_completion_tokens', 'max_tokens');
  // Mistral's name for "must call a tool" is `any`.
  if (converted['tool_choice'] === 'required') converted['tool_choice'] = 'any';
  if (Array.isArray(converted['messages'])) {
    converted['messages'] = convertToMistralMessages(converted['messages'] as Message[]);
  }
  return converted;
}

/** Moves a param to Mistral's name; an explicit Mistral-named value wins. */
function rename(body: Record<string, unknown>, from: string, to: string): void {
  if (body[from] === undefined) return;
  if (body[to] === undefined) body[to] = body[from];
  delete body[from];
}
