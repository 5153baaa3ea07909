import { type FakeRoute, type FakeUpstreamRequest, startFakeUpstream } from './fake-upstream.ts';

/** One SSE event as the Gemini API frames it (`alt=sse`): `data:` and a CRLF blank line. */
function geminiEvent(data: unknown): string {
  return `data: ${JSON.stringify(data)}\r\n\r\n`;
}

export interface GeminiAnswerOptions {
  text?: string;
  functionCall?: { name: string; args: Record<string, unknown> };
  model?: string;
}

/** A GenerateContentResponse. */
function geminiResponse(options: GeminiAnswerOptions = {}) {
  const parts: unknown[] = [];
  if (options.text !== undefined || !options.functionCall)
    parts.push({ text: options.text ?? 'Hello from Gemini' });
  if (options.functionCall) parts.push({ functionCall: options.functionCall });
  return {
    candidates: [{ content: { role: 'model', parts }, finishReason: 'STOP', index: 0 }],
    usageMetadata: { promptTokenCount: 9, candidatesTokenCount: 4, totalTokenCount: 13 },
    modelVersion: options.model ?? 'gemini-2.5-flash',
    responseId: 'fake-gemini-1',
  };
}

/** A streamed answer: text pieces, the last one with the finish reason and usage. */
function geminiStream(options: { pieces?: string[]; model?: string } = {}): string[] {
  const pieces = options.pieces ?? ['Hel', 'lo', ' Gemini'];
  return pieces.map((text, index) =>
    geminiEvent({
      candidates: [
        {
          content: { role: 'model', parts: [{ text }] },
          index: 0,
          ...(index === pieces.length - 1 ? { finishReason: 'STOP' } : {}),
        },
      ],
      ...(index === pieces.length - 1
        ? { usageMetadata: { promptTokenCount: 9, candidatesTokenCount: 3, totalTokenCount: 12 } }
        : {}),
      modelVersion: options.model ?? 'gemini-2.5-flash',
    }),
  );
}

function batchEmbeddings(request: FakeUpstreamRequest) {
  const requests = (request.body as { requests?: unknown[] } | undefined)?.requests ?? [];
  return { json: { embeddings: requests.map((_, index) => ({ values: [index, 0.5, -0.5] })) } };
}

const GEMINI_ROUTES: FakeRoute[] = [
  { path: /:streamGenerateContent/, answer: () => ({ sse: geminiStream() }) },
  { path: /:batchEmbedContents/, answer: batchEmbeddings },
  { path: /:embedContent/, answer: () => ({ json: { embedding: { values: [0.5, -0.5] } } }) },
  // Every other path answers generated content, as generateContent does.
  { path: /./, answer: () => ({ json: geminiResponse() }) },
];

/** A fake Gemini API (generativelanguage) on loopback (real wire format), recording what gw sent. */
export function startFakeGemini() {
  return startFakeUpstream(GEMINI_ROUTES);
}
