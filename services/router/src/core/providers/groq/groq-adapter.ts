import { DEFAULT_CAPABILITIES } from '../adapter.ts';
import { createOpenAiCompatibleAdapter } from '../openai/openai-adapter.ts';
import { openAiUsageSchema } from '../openai/openai-schemas.ts';
import { withTextViaChat } from '../text-via-chat.ts';
import { convertToGroqBody } from './convert-to-groq-body.ts';

/** Groq serves the OpenAI paths under `/openai`. */
export const GROQ_DEFAULT_BASE_URL = 'https://api.groq.com/openai';

/**
 * Groq: OpenAI's chat format, without legacy completions (served by chat) or embeddings. Streams report
 * usage in `x_groq.usage` on the finish chunk.
 */
export const groqAdapter = withTextViaChat(
  createOpenAiCompatibleAdapter({
    capabilities: { ...DEFAULT_CAPABILITIES, operations: ['chat', 'chat_stream'] },
    adjustBody: (body) => convertToGroqBody(body),
    readChunkUsage: (chunk) => {
      const xGroq = chunk['x_groq'];
      const usage =
        typeof xGroq === 'object' && xGroq !== null ? (xGroq as { usage?: unknown }).usage : undefined;
      const parsed = openAiUsageSchema.safeParse(usage);
      return parsed.success ? parsed.data : undefined;
    },
  }),
);
