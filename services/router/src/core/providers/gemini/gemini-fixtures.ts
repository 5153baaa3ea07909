/**
 * Test fixtures: answers in the Gemini API's true wire format (GenerateContentResponse, v1beta), shared by
 * the Gemini and Vertex contract tests and the unit tests. Vertex answers the same shapes.
 */

/** One server-sent event as Gemini frames it with `alt=sse`: a `data:` line, then `\r\n\r\n`. */
export function geminiSseEvent(data: unknown): string {
  return `data: ${JSON.stringify(data)}\r\n\r\n`;
}

const MODEL_VERSION = 'gemini-2.5-flash';

export const chatAnswer = {
  candidates: [
    {
      content: { parts: [{ text: 'Hello there' }], role: 'model' },
      finishReason: 'STOP',
      avgLogprobs: -0.0123,
      index: 0,
    },
  ],
  usageMetadata: {
    promptTokenCount: 10,
    candidatesTokenCount: 5,
    totalTokenCount: 15,
    cachedContentTokenCount: 2,
    promptTokensDetails: [{ modality: 'TEXT', tokenCount: 10 }],
    cacheTokensDetails: [{ modality: 'TEXT', tokenCount: 2 }],
  },
  modelVersion: MODEL_VERSION,
  responseId: 'mCKfaPm7GMOhz7IPk8TA8Qk',
};

export const toolAnswer = {
  candidates: [
    {
      content: {
        parts: [
          {
            functionCall: { name: 'get_weather', args: { city: 'Paris' } },
            thoughtSignature: 'CtwBAVSoXO4Pz1CGl3W0rz3bqQ8ZpqkZKt7AS1Ht0I5vc0n=',
          },
        ],
        role: 'model',
      },
      finishReason: 'STOP',
      index: 0,
    },
  ],
  usageMetadata: {
    promptTokenCount: 20,
    candidatesTokenCount: 5,
    thoughtsTokenCount: 3,
    totalTokenCount: 28,
    promptTokensDetails: [{ modality: 'TEXT', tokenCount: 20 }],
  },
  modelVersion: MODEL_VERSION,
  responseId: 'nCKfaKfGLqK6z7IP_pLp4Q4',
};

export const errorAnswer = {
  error: { code: 400, message: 'bad things happened', status: 'INVALID_ARGUMENT' },
};

/** 'Hello thére' in the pieces 'Hel', 'lo th', 'ére'; each event repeats the running usage, the last 10/5. */
export const chatStreamEvents = [
  geminiSseEvent({
    candidates: [{ content: { parts: [{ text: 'Hel' }], role: 'model' }, index: 0 }],
    usageMetadata: {
      promptTokenCount: 10,
      totalTokenCount: 10,
      promptTokensDetails: [{ modality: 'TEXT', tokenCount: 10 }],
    },
    modelVersion: MODEL_VERSION,
    responseId: 'oCKfaO2uBPK5z7IPq4Gy6Q0',
  }),
  geminiSseEvent({
    candidates: [{ content: { parts: [{ text: 'lo th' }], role: 'model' }, index: 0 }],
    usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 3, totalTokenCount: 13 },
    modelVersion: MODEL_VERSION,
    responseId: 'oCKfaO2uBPK5z7IPq4Gy6Q0',
  }),
  geminiSseEvent({
    candidates: [{ content: { parts: [{ text: 'ére' }], role: 'model' }, finishReason: 'STOP', index: 0 }],
    usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 5, totalTokenCount: 15 },
    modelVersion: MODEL_VERSION,
    responseId: 'oCKfaO2uBPK5z7IPq4Gy6Q0',
  }),
];

/** Gemini streams a function call whole, in one event with its finishReason. */
export const chatStreamToolEvents = [
  geminiSseEvent({
    candidates: [
      {
        content: {
          parts: [
            {
              functionCall: { name: 'get_weather', args: { city: 'Paris' } },
              thoughtSignature: 'Cq0CAVSoXO5=',
            },
          ],
          role: 'model',
        },
        finishReason: 'STOP',
        index: 0,
      },
    ],
    usageMetadata: { promptTokenCount: 20, candidatesTokenCount: 8, totalTokenCount: 28 },
    modelVersion: MODEL_VERSION,
    responseId: 'pCKfaMLFH-bGz7IPjN3s0Q4',
  }),
];

export const textAnswer = {
  ...chatAnswer,
  candidates: [
    { content: { parts: [{ text: 'Once upon' }], role: 'model' }, finishReason: 'STOP', index: 0 },
  ],
  usageMetadata: { promptTokenCount: 3, candidatesTokenCount: 2, totalTokenCount: 5 },
};

export const embeddingsAnswer = {
  embeddings: [{ values: [0.1, 0.2] }, { values: [0.3, 0.4] }],
  usageMetadata: { promptTokenCount: 2, promptTokenDetails: [{ modality: 'TEXT', tokenCount: 2 }] },
};
