/**
 * Test fixtures: answers in Bedrock Runtime's true wire format (Converse, ConverseStream, InvokeModel with
 * Titan embeddings), shared by the contract test and the unit tests of this folder. Stream answers are
 * binary AWS event-stream frames, encoded with the same codec the AWS SDK uses.
 */
import { EventStreamCodec } from '@smithy/core/event-streams';
import { fromUtf8, toUtf8 } from '@smithy/core/serde';

const codec = new EventStreamCodec(toUtf8, fromUtf8);

export const MODEL_ID = 'anthropic.claude-3-5-sonnet-20240620-v1:0';

/** A ConverseStream event frame. Bedrock pads payloads with a `p` member so sizes leak nothing. */
export function eventFrame(eventType: string, payload: Record<string, unknown>): Buffer {
  return Buffer.from(
    codec.encode({
      headers: {
        ':event-type': { type: 'string', value: eventType },
        ':content-type': { type: 'string', value: 'application/json' },
        ':message-type': { type: 'string', value: 'event' },
      },
      body: fromUtf8(JSON.stringify({ ...payload, p: 'abcdefghijklmnopqrstuvwxyzABCDEF' })),
    }),
  );
}

/** An exception frame, as Bedrock sends one when a stream fails after it started. */
export function exceptionFrame(exceptionType: string, message: string): Buffer {
  return Buffer.from(
    codec.encode({
      headers: {
        ':exception-type': { type: 'string', value: exceptionType },
        ':content-type': { type: 'string', value: 'application/json' },
        ':message-type': { type: 'string', value: 'exception' },
      },
      body: fromUtf8(JSON.stringify({ message })),
    }),
  );
}

export const EVENT_STREAM_HEADERS = {
  'content-type': 'application/vnd.amazon.eventstream',
  'x-amzn-requestid': '5a8f0c3e-2b1d-4e9f-9c7a-1d2e3f4a5b6c',
};

export const chatAnswer = {
  output: { message: { role: 'assistant', content: [{ text: 'Hello there' }] } },
  stopReason: 'end_turn',
  usage: {
    inputTokens: 8,
    outputTokens: 5,
    totalTokens: 15,
    cacheReadInputTokens: 2,
    cacheWriteInputTokens: 0,
  },
  metrics: { latencyMs: 412 },
};

export const toolAnswer = {
  output: {
    message: {
      role: 'assistant',
      content: [
        {
          toolUse: {
            toolUseId: 'tooluse_kZJMlvQmRJ6eAyJE5GIl7Q',
            name: 'get_weather',
            input: { city: 'Paris' },
          },
        },
      ],
    },
  },
  stopReason: 'tool_use',
  usage: { inputTokens: 20, outputTokens: 8, totalTokens: 28 },
  metrics: { latencyMs: 655 },
};

export const textAnswer = {
  output: { message: { role: 'assistant', content: [{ text: 'Once upon' }] } },
  stopReason: 'end_turn',
  usage: { inputTokens: 3, outputTokens: 2, totalTokens: 5 },
  metrics: { latencyMs: 120 },
};

/** Converse's error body; the exception's name is in the `x-amzn-errortype` header. */
export const errorAnswer = { message: 'bad things happened' };
export const ERROR_HEADERS = {
  'x-amzn-errortype': 'ValidationException:http://internal.amazon.com/coral/com.amazon.bedrock/',
  'x-amzn-requestid': '9b2c7d4e-0f1a-4b3c-8d5e-6f7a8b9c0d1e',
};

export const chatStreamFrames = [
  eventFrame('messageStart', { role: 'assistant' }),
  eventFrame('contentBlockDelta', { contentBlockIndex: 0, delta: { text: 'Hel' } }),
  eventFrame('contentBlockDelta', { contentBlockIndex: 0, delta: { text: 'lo th' } }),
  eventFrame('contentBlockDelta', { contentBlockIndex: 0, delta: { text: 'ére' } }),
  eventFrame('contentBlockStop', { contentBlockIndex: 0 }),
  eventFrame('messageStop', { stopReason: 'end_turn' }),
  eventFrame('metadata', {
    usage: { inputTokens: 10, outputTokens: 5, totalTokens: 15 },
    metrics: { latencyMs: 301 },
  }),
];

export const chatStreamToolFrames = [
  eventFrame('messageStart', { role: 'assistant' }),
  eventFrame('contentBlockDelta', { contentBlockIndex: 0, delta: { text: 'Let me check.' } }),
  eventFrame('contentBlockStop', { contentBlockIndex: 0 }),
  eventFrame('contentBlockStart', {
    contentBlockIndex: 1,
    start: { toolUse: { toolUseId: 'tooluse_Fq4PzVZ3QdWbY5Eq3Kq0Aw', name: 'get_weather' } },
  }),
  eventFrame('contentBlockDelta', { contentBlockIndex: 1, delta: { toolUse: { input: '{"city":' } } }),
  eventFrame('contentBlockDelta', { contentBlockIndex: 1, delta: { toolUse: { input: '"Paris"}' } } }),
  eventFrame('contentBlockStop', { contentBlockIndex: 1 }),
  eventFrame('messageStop', { stopReason: 'tool_use' }),
  eventFrame('metadata', {
    usage: { inputTokens: 20, outputTokens: 8, totalTokens: 28 },
    metrics: { latencyMs: 512 },
  }),
];

/** Titan text embeddings v2 (InvokeModel) answer for one input. */
export function titanEmbeddingAnswer(embedding: number[], tokens: number) {
  return { embedding, embeddingsByType: { float: embedding }, inputTextTokenCount: tokens };
}
