import type { StreamItem } from '@gw/router';
import type { GatewayError } from '@gw/shared';
import type { SseFraming } from '../../http/sse-writer.ts';
import { estimateOf } from '../../request/estimate-tokens.ts';
import type { ParsedCompletion } from '../../request/parse-request.ts';
import { type BlockEvent, ChatChunksToBlocks } from '../shared/chat-chunks-to-blocks.ts';
import { anthropicErrorType } from './anthropic-error.ts';
import { anthropicStopReason, anthropicUsage } from './chat-to-anthropic.ts';

type AnthropicEvent = { type: string } & Record<string, unknown>;

const sse = (data: AnthropicEvent) => `event: ${data.type}\ndata: ${JSON.stringify(data)}\n\n`;

function translate(blockEvent: BlockEvent): AnthropicEvent {
  switch (blockEvent.type) {
    case 'block_start':
      return {
        type: 'content_block_start',
        index: blockEvent.index,
        content_block:
          blockEvent.block.type === 'text'
            ? { type: 'text', text: '' }
            : { type: 'tool_use', id: blockEvent.block.id, name: blockEvent.block.name, input: {} },
      };
    case 'text_delta':
      return {
        type: 'content_block_delta',
        index: blockEvent.index,
        delta: { type: 'text_delta', text: blockEvent.text },
      };
    case 'arguments_delta':
      return {
        type: 'content_block_delta',
        index: blockEvent.index,
        delta: { type: 'input_json_delta', partial_json: blockEvent.arguments },
      };
    case 'block_stop':
      return { type: 'content_block_stop', index: blockEvent.index };
  }
}

/** What a translated Anthropic stream needs besides the chunks. */
export interface AnthropicStreamOptions {
  requestId: string;
  /**
   * The prompt as sent to the provider, which `message_start` announces gw's estimate of: most providers
   * report the prompt's tokens only at the end, after the last chunk.
   */
  prompt: Pick<ParsedCompletion, 'operation' | 'messages' | 'params'>;
}

/**
 * Anthropic's stream events (`message_start`, content blocks with `text_delta` / `input_json_delta`,
 * `message_delta` with the stop reason and usage, `message_stop`) from chat chunks, as objects: the
 * Messages surface frames them as SSE, Bedrock's InvokeModelWithResponseStream as event-stream chunks.
 * `message_start` announces gw's estimate of the input tokens, as Anthropic announces its count there (some
 * clients read input tokens nowhere else); `message_delta` carries the provider's figures, which Anthropic's
 * SDK takes over the first.
 */
export function chatChunksToAnthropicObjects(options: AnthropicStreamOptions) {
  const blocks = new ChatChunksToBlocks();
  let started = false;
  let estimatedInputTokens = 0;
  const start = (model: string): AnthropicEvent => {
    estimatedInputTokens = estimateOf(options.prompt).promptTokens;
    return {
      type: 'message_start',
      message: {
        id: `msg_${options.requestId}`,
        type: 'message',
        role: 'assistant',
        model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { input_tokens: estimatedInputTokens, output_tokens: 0 },
      },
    };
  };
  // A provider that reported no usage leaves the estimate standing rather than a count of zero.
  const finalUsage = () =>
    blocks.usage ? anthropicUsage(blocks.usage) : { input_tokens: estimatedInputTokens, output_tokens: 0 };
  return {
    blocks,
    push(item: StreamItem): AnthropicEvent[] {
      const events = blocks.push(item.chunk);
      const out: AnthropicEvent[] = [];
      if (!started) {
        started = true;
        out.push(start(item.chunk.model || blocks.model));
      }
      for (const blockEvent of events) out.push(translate(blockEvent));
      return out;
    },
    end(): AnthropicEvent[] {
      const out: AnthropicEvent[] = started ? [] : [start(blocks.model)];
      started = true;
      for (const blockEvent of blocks.end()) out.push(translate(blockEvent));
      out.push(
        {
          type: 'message_delta',
          delta: { stop_reason: anthropicStopReason(blocks.finishReason), stop_sequence: null },
          usage: finalUsage(),
        },
        { type: 'message_stop' },
      );
      return out;
    },
    error(error: GatewayError): AnthropicEvent {
      return { type: 'error', error: { type: anthropicErrorType(error.status), message: error.message } };
    },
  };
}

/** The Messages surface's stream framing: Anthropic's events as SSE (`event:` + `data:`; no `[DONE]`). */
export function chatChunksToAnthropicEvents(options: AnthropicStreamOptions): SseFraming {
  const objects = chatChunksToAnthropicObjects(options);
  return {
    event: (item: StreamItem) => objects.push(item).map(sse).join(''),
    end: () => objects.end().map(sse).join(''),
    error: (error: GatewayError) => sse(objects.error(error)),
  };
}
