import { type FakeUpstreamRequest, startFakeUpstream } from './fake-upstream.ts';

/** Dimensions of the fake's vectors; a test's own vectors are padded with zeros to this length. */
const DIMENSIONS = 256;
/** Axes 0–7 are the test's; every other text gets an axis of its own from 8 on. */
const FIRST_FREE_AXIS = 8;

/**
 * A fake OpenAI embeddings upstream (`POST …/embeddings`) whose vectors the test controls: `vectors` maps a
 * text to its vector, and any other text gets a one-hot vector of its own (orthogonal to every other, so
 * texts the test did not relate never match). Every answer reports `promptTokens` tokens per text.
 */
export async function startFakeEmbeddings(options: { promptTokens?: number } = {}) {
  const vectors = new Map<string, number[]>();
  const axes = new Map<string, number>();
  const vectorOf = (text: string): number[] => {
    const own = vectors.get(text);
    const vector = new Array<number>(DIMENSIONS).fill(0);
    if (own) {
      own.forEach((value, index) => {
        vector[index] = value;
      });
      return vector;
    }
    let axis = axes.get(text);
    if (axis === undefined) {
      axis = FIRST_FREE_AXIS + (axes.size % (DIMENSIONS - FIRST_FREE_AXIS));
      axes.set(text, axis);
    }
    vector[axis] = 1;
    return vector;
  };
  const tokens = options.promptTokens ?? 4;
  const upstream = await startFakeUpstream([
    {
      method: 'POST',
      path: /\/embeddings$/,
      answer: (request: FakeUpstreamRequest) => {
        const body = request.body as { input?: unknown; model?: unknown };
        const inputs = Array.isArray(body.input) ? body.input.map(String) : [String(body.input)];
        return {
          json: {
            object: 'list',
            data: inputs.map((text, index) => ({ object: 'embedding', index, embedding: vectorOf(text) })),
            model: typeof body.model === 'string' ? body.model : 'embed-small',
            usage: { prompt_tokens: tokens * inputs.length, total_tokens: tokens * inputs.length },
          },
        };
      },
    },
  ]);
  return {
    ...upstream,
    /** Sets the vector of a text (at most 8 dimensions that matter; the rest are zeros). */
    vectors,
    /** The texts embedded so far, in order. */
    texts: () =>
      upstream.requests.flatMap((request) => {
        const input = (request.body as { input?: unknown }).input;
        return Array.isArray(input) ? input.map(String) : [String(input)];
      }),
  };
}

export type FakeEmbeddings = Awaited<ReturnType<typeof startFakeEmbeddings>>;
