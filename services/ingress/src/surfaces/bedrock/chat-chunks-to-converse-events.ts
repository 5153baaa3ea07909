import type { StreamItem } from '@gw/router';
import type { GatewayError } from '@gw/shared';
import type { SseFraming } from '../../http/sse-writer.ts';
import { type BlockEvent, ChatChunksToBlocks } from '../shared/chat-chunks-to-blocks.ts';
import { bedrockStreamExceptionType } from './bedrock-error.ts';
import { converseStopReason, converseUsage } from './chat-to-converse.ts';
import { concatFrames, eventFrame, exceptionFrame, jsonEventFrame } from './event-stream-frame.ts';

function translate(blockEvent: BlockEvent): Uint8Array | undefined {
  const contentBlockIndex = blockEvent.index;
  switch (blockEvent.type) {
    case 'block_start':
      // Converse opens only tool blocks explicitly; text blocks begin with their first delta.
      if (blockEvent.block.type === 'text') return undefined;
      return eventFrame('contentBlockStart', {
        contentBlockIndex,
        start: { toolUse: { toolUseId: blockEvent.block.id, name: blockEvent.block.name } },
      });
    case 'text_delta':
      return eventFrame('contentBlockDelta', { contentBlockIndex, delta: { text: blockEvent.text } });
    case 'arguments_delta':
      return eventFrame('contentBlockDelta', {
        contentBlockIndex,
        delta: { toolUse: { input: blockEvent.arguments } },
      });
    case 'block_stop':
      return eventFrame('contentBlockStop', { contentBlockIndex });
  }
}

/** The same for every stream: encoded once. */
const MESSAGE_START = eventFrame('messageStart', { role: 'assistant' });

/**
 * ConverseStream's binary event stream from chat chunks: `messageStart`, `contentBlockStart` (tool use),
 * `contentBlockDelta`, `contentBlockStop`, `messageStop` with the stop reason, `metadata` with usage; a
 * failure after the start is an exception frame.
 */
export function chatChunksToConverseEvents(): SseFraming {
  const blocks = new ChatChunksToBlocks();
  const startedAt = performance.now();
  let started = false;
  const frames = (events: BlockEvent[], first: boolean): Uint8Array => {
    const out: Uint8Array[] = [];
    if (first) out.push(MESSAGE_START);
    for (const event of events) {
      const frame = translate(event);
      if (frame) out.push(frame);
    }
    return out.length === 0 ? new Uint8Array(0) : concatFrames(out);
  };
  return {
    contentType: 'application/vnd.amazon.eventstream',
    event(item: StreamItem) {
      const first = !started;
      started = true;
      return frames(blocks.push(item.chunk), first);
    },
    end() {
      const first = !started;
      started = true;
      return concatFrames([
        frames(blocks.end(), first),
        eventFrame('messageStop', { stopReason: converseStopReason(blocks.finishReason) }),
        eventFrame('metadata', {
          usage: converseUsage(blocks.usage),
          metrics: { latencyMs: Math.round(performance.now() - startedAt) },
        }),
      ]);
    },
    error(error: GatewayError) {
      return exceptionFrame(bedrockStreamExceptionType(error.status), error.message);
    },
  };
}

/**
 * The Converse surface's framing of a stream that answers the caller's own request (router-service.ts
 * StreamItem.native): Bedrock's events, one JSON line each (type and payload as Bedrock sent them), encoded
 * as frames again; any other stream is framed from its chat chunks.
 */
export function relayingConverseEvents(framing: SseFraming): SseFraming {
  let relayed = false;
  return {
    ...framing,
    event(item: StreamItem) {
      if (item.native === undefined) return framing.event(item);
      relayed = true;
      const frames: Uint8Array[] = [];
      for (const line of item.native.split('\n')) {
        if (!line) continue;
        const { event, payload } = JSON.parse(line) as { event: string; payload: string };
        frames.push(jsonEventFrame(event, payload));
      }
      return frames.length === 0 ? new Uint8Array(0) : concatFrames(frames);
    },
    end: () => {
      if (relayed) return new Uint8Array(0);
      return typeof framing.end === 'function' ? framing.end() : (framing.end ?? '');
    },
  };
}
