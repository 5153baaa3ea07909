import { createLocalOpenAiServerAdapter } from '../openai/local-openai-server.ts';

/** SGLang through its OpenAI-compatible API (`/v1/chat/completions`, `/v1/completions`, `/v1/embeddings`). */
export const sglAdapter = createLocalOpenAiServerAdapter();
