/** Test fixtures in Vertex's own wire format (Gemini answers are shared with the Gemini folder). */

/** A text-embedding `:predict` answer: one prediction per instance, token counts in `statistics`. */
export const embeddingsAnswer = {
  predictions: [
    { embeddings: { values: [0.1, 0.2], statistics: { truncated: false, token_count: 1 } } },
    { embeddings: { values: [0.3, 0.4], statistics: { truncated: false, token_count: 1 } } },
  ],
  metadata: { billableCharacterCount: 2 },
};
