import { createLocalOpenAiServerAdapter } from '../openai/local-openai-server.ts';

/** Ollama through its OpenAI-compatible API (`/v1/chat/completions`, `/v1/completions`, `/v1/embeddings`). */
export const ollamaAdapter = createLocalOpenAiServerAdapter();
