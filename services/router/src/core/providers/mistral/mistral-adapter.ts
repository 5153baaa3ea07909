import { DEFAULT_CAPABILITIES } from '../adapter.ts';
import { createOpenAiCompatibleAdapter } from '../openai/openai-adapter.ts';
import { withTextViaChat } from '../text-via-chat.ts';
import { convertToMistralBody } from './convert-to-mistral-body.ts';
import { mapMistralUsage } from './map-mistral-usage.ts';
import { readMistralErrorMessage } from './mistral-error.ts';

export const MISTRAL_DEFAULT_BASE_URL = 'https://api.mistral.ai';

/**
 * Mistral La Plateforme: OpenAI's wire format with stricter validation and its own param names. It has no
 * legacy completions endpoint, so text completions are served by chat; usage arrives without asking, with
 * Mistral's own members (map-mistral-usage.ts).
 */
export const mistralAdapter = withTextViaChat(
  createOpenAiCompatibleAdapter({
    capabilities: { ...DEFAULT_CAPABILITIES, operations: ['chat', 'chat_stream', 'embeddings'] },
    adjustBody: (body, _context, operation) => convertToMistralBody(body, operation),
    readErrorMessage: readMistralErrorMessage,
    mapUsage: mapMistralUsage,
  }),
);
