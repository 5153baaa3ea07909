import type { StreamItem } from '@gw/router';
import { type GatewayError, invalidRequest } from '@gw/shared';
import type { SseFraming } from '../../http/sse-writer.ts';
import type { ParsedCompletion, Target } from '../../request/parse-request.ts';
import { anthropicToChat } from '../anthropic/anthropic-to-chat.ts';
import {
  type AnthropicStreamOptions,
  chatChunksToAnthropicObjects,
} from '../anthropic/chat-chunks-to-anthropic-events.ts';
import { bedrockStreamExceptionType } from './bedrock-error.ts';
import { concatFrames, eventFrame, exceptionFrame } from './event-stream-frame.ts';

/**
 * An InvokeModel body in Anthropic-on-Bedrock form (`anthropic_version: bedrock-2023-05-31`, the model in
 * the path, no `stream` member) as a chat completion. Other model families' native bodies are refused:
 * Converse is the model-neutral API for them.
 */
export function invokeToChat(options: { body: unknown; target: Target; stream: boolean }): ParsedCompletion {
  const body = options.body as Record<string, unknown> | null;
  if (typeof body !== 'object' || body === null || typeof body['anthropic_version'] !== 'string') {
    throw invalidRequest(
      "InvokeModel on gw takes Anthropic Messages bodies ('anthropic_version': 'bedrock-2023-05-31'); use Converse for other models",
      'anthropic_version',
    );
  }
  const { anthropic_version: _version, ...messages } = body;
  return anthropicToChat({ ...messages, model: 'invoke', stream: options.stream }, () => options.target);
}

/**
 * InvokeModelWithResponseStream's framing: each Anthropic stream event, JSON, base64-encoded in the
 * `bytes` of a `chunk` event; the last one carries Bedrock's invocation metrics.
 */
export function chatChunksToInvokeEvents(options: AnthropicStreamOptions): SseFraming {
  const objects = chatChunksToAnthropicObjects(options);
  const startedAt = performance.now();
  let firstByteLatency: number | undefined;
  const chunk = (event: Record<string, unknown>) =>
    eventFrame('chunk', { bytes: Buffer.from(JSON.stringify(event)).toString('base64') });
  return {
    contentType: 'application/vnd.amazon.eventstream',
    event(item: StreamItem) {
      firstByteLatency ??= Math.round(performance.now() - startedAt);
      const events = objects.push(item);
      return events.length === 0 ? new Uint8Array(0) : concatFrames(events.map(chunk));
    },
    end() {
      const events = objects.end();
      const usage = objects.blocks.usage;
      const last = events[events.length - 1]!;
      last['amazon-bedrock-invocationMetrics'] = {
        inputTokenCount: usage?.prompt_tokens ?? 0,
        outputTokenCount: usage?.completion_tokens ?? 0,
        invocationLatency: Math.round(performance.now() - startedAt),
        firstByteLatency: firstByteLatency ?? 0,
      };
      return concatFrames(events.map(chunk));
    },
    error(error: GatewayError) {
      return exceptionFrame(bedrockStreamExceptionType(error.status), error.message);
    },
  };
}
