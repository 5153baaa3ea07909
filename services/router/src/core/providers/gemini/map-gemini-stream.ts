import { type ChatCompletionChunk, newId, type SseEvent } from '@gw/shared';
import { invalidUpstreamBody, parseEventJson } from '../upstream-call.ts';
import { geminiStreamError, isGeminiErrorEvent } from './gemini-error.ts';
import { type GeminiUsage, geminiResponseSchema } from './gemini-schemas.ts';
import { mapGeminiFinishReason } from './map-gemini-finish-reason.ts';
import { answerText, thoughtText, toolCallsOf } from './map-gemini-response.ts';
import { mapGeminiUsage } from './map-gemini-usage.ts';

type Choice = ChatCompletionChunk['choices'][number];

/**
 * Gemini stream events (each a whole GenerateContentResponse carrying the new parts) as OpenAI chunks,
 * yielded as each event arrives. Gemini sends a function call whole in one event; it is passed on as
 * OpenAI streams one: a delta that opens the call (id, name, empty arguments) and a delta with the arguments.
 * Every event repeats the running usage, so the last one seen becomes the final usage chunk.
 */
export async function* mapGeminiStream(
  events: AsyncIterable<SseEvent>,
  options: { provider: string; model: string },
): AsyncGenerator<ChatCompletionChunk> {
  const created = Math.floor(Date.now() / 1000);
  let id: string | undefined;
  let model = options.model;
  let usage: GeminiUsage | undefined;
  const started = new Set<number>();
  const toolCallCounts = new Map<number, number>();

  const chunk = (choices: Choice[]): ChatCompletionChunk => ({
    id: id ?? '',
    object: 'chat.completion.chunk',
    created,
    model,
    choices,
  });

  function* start(index: number): Generator<ChatCompletionChunk> {
    if (started.has(index)) return;
    started.add(index);
    yield chunk([{ index, delta: { role: 'assistant' }, finish_reason: null }]);
  }

  for await (const event of events) {
    const payload = parseEventJson(options.provider, event.data);
    if (isGeminiErrorEvent(payload)) throw geminiStreamError(options.provider, payload);
    const parsed = geminiResponseSchema.safeParse(payload);
    if (!parsed.success) throw invalidUpstreamBody(options.provider, 'stream carried an unexpected event');
    const response = parsed.data;
    id ??= response.responseId ?? newId('chatcmpl');
    model = response.modelVersion ?? model;
    usage = response.usageMetadata ?? usage;

    for (const [position, candidate] of response.candidates.entries()) {
      const index = candidate.index ?? position;
      yield* start(index);
      const parts = candidate.content?.parts ?? [];
      const thoughts = thoughtText(parts);
      if (thoughts) yield chunk([{ index, delta: { reasoning_content: thoughts }, finish_reason: null }]);
      const text = answerText(parts);
      if (text) yield chunk([{ index, delta: { content: text }, finish_reason: null }]);
      for (const call of toolCallsOf(parts)) {
        const toolIndex = toolCallCounts.get(index) ?? 0;
        toolCallCounts.set(index, toolIndex + 1);
        const { name, arguments: callArguments } = call.function;
        yield chunk([
          {
            index,
            delta: {
              tool_calls: [
                { index: toolIndex, id: call.id, type: 'function', function: { name, arguments: '' } },
              ],
            },
            finish_reason: null,
          },
        ]);
        yield chunk([
          {
            index,
            delta: { tool_calls: [{ index: toolIndex, function: { arguments: callArguments } }] },
            finish_reason: null,
          },
        ]);
      }
      if (candidate.finishReason) {
        const finish = mapGeminiFinishReason(candidate.finishReason, toolCallCounts.has(index));
        yield chunk([{ index, delta: {}, finish_reason: finish }]);
      }
    }
    if (response.candidates.length === 0 && response.promptFeedback?.blockReason) {
      yield* start(0);
      yield chunk([{ index: 0, delta: {}, finish_reason: 'content_filter' }]);
    }
  }
  if (usage) yield { ...chunk([]), usage: mapGeminiUsage(usage) };
}
