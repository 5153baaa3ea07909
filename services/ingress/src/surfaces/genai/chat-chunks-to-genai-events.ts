import type { StreamItem } from '@gw/router';
import type { GatewayError } from '@gw/shared';
import type { SseFraming } from '../../http/sse-writer.ts';
import { ChatChunksToBlocks } from '../shared/chat-chunks-to-blocks.ts';
import { functionCallPart, genAiFinishReason, genAiUsage } from './chat-to-genai.ts';
import { genAiErrorBody } from './genai-error.ts';

/**
 * Gemini's stream from chat chunks: one GenerateContentResponse per piece of text, a function call as one
 * part once its arguments are complete (Gemini never streams them in pieces), and a last response with the
 * finish reason and usage. `alt=sse` frames each as `data: …` and a CRLF blank line (what @google/genai
 * asks for); without it the responses are the elements of one JSON array, as the Gemini API sends them.
 */
export function chatChunksToGenAiEvents(options: { requestId: string; sse: boolean }): SseFraming {
  const blocks = new ChatChunksToBlocks();
  let count = 0;
  const frame = (value: unknown) => {
    const json = JSON.stringify(value);
    if (options.sse) return `data: ${json}\r\n\r\n`;
    return `${count++ === 0 ? '[' : ',\r\n'}${json}`;
  };
  const response = (parts: unknown[], extra: Record<string, unknown> = {}) => ({
    candidates: [{ content: { role: 'model', parts }, index: 0, ...extra }],
    modelVersion: blocks.model,
    responseId: options.requestId,
  });
  const partsOf = (events: ReturnType<ChatChunksToBlocks['push']>) => {
    const parts: unknown[] = [];
    for (const event of events) {
      if (event.type === 'text_delta') parts.push({ text: event.text });
      else if (event.type === 'block_stop' && event.block.type === 'tool_call') {
        parts.push(functionCallPart({ id: event.block.id, name: event.block.name, arguments: event.text }));
      }
    }
    return parts;
  };
  return {
    contentType: options.sse ? 'text/event-stream' : 'application/json',
    event(item: StreamItem) {
      const parts = partsOf(blocks.push(item.chunk));
      return parts.length > 0 ? frame(response(parts)) : '';
    },
    end() {
      const parts = partsOf(blocks.end());
      const last = frame({
        ...response(parts.length > 0 ? parts : [{ text: '' }], {
          finishReason: genAiFinishReason(blocks.finishReason),
        }),
        usageMetadata: genAiUsage(blocks.usage),
      });
      return options.sse ? last : `${last}]`;
    },
    error(error: GatewayError) {
      const body = JSON.stringify(genAiErrorBody(error));
      return options.sse ? `data: ${body}\r\n\r\n` : `${count++ === 0 ? '[' : ',\r\n'}${body}]`;
    },
  };
}
