import { type ChatCompletionChunk, GatewayError, networkConfigSchema } from '@gw/shared';
import { describe, expect, it } from 'vitest';
import { chatStreamFrames, eventFrame, exceptionFrame } from '../../../testing/fixtures/bedrock-fixtures.ts';
import { UpstreamClient } from '../../upstream-client.ts';
import type { AdapterContext } from '../adapter.ts';
import { readBedrockErrorMessage } from './bedrock-error.ts';
import { mapBedrockStream } from './map-bedrock-stream.ts';
import { readEventStream } from './read-event-stream.ts';

const context: AdapterContext = {
  provider: 'bedrock',
  http: new UpstreamClient(),
  baseUrl: 'http://127.0.0.1:1',
  key: undefined,
  network: networkConfigSchema.parse({}),
  timeoutMs: 1_000,
  signal: new AbortController().signal,
  environment: {},
};

/** The bytes as a network body delivering `size` bytes per read. */
async function* pieces(frames: Buffer[], size: number): AsyncGenerator<Uint8Array> {
  const bytes = Buffer.concat(frames);
  for (let offset = 0; offset < bytes.length; offset += size) yield bytes.subarray(offset, offset + size);
}

async function run(frames: Buffer[], size = 5): Promise<ChatCompletionChunk[]> {
  const chunks: ChatCompletionChunk[] = [];
  const stream = mapBedrockStream(readEventStream(pieces(frames, size), context), {
    provider: 'bedrock',
    model: 'm',
    id: 'chatcmpl_1',
  });
  for await (const chunk of stream) chunks.push(chunk);
  return chunks;
}

async function failure(frames: Buffer[]): Promise<GatewayError> {
  const error = await run(frames).catch((caught: unknown) => caught);
  expect(error).toBeInstanceOf(GatewayError);
  return error as GatewayError;
}

describe('mapBedrockStream over readEventStream', () => {
  it('decodes frames delivered one byte at a time', async () => {
    const chunks = await run(chatStreamFrames, 1);
    expect(chunks.map((chunk) => chunk.choices[0]?.delta?.content ?? '').join('')).toBe('Hello thére');
    expect(chunks[0]!.choices[0]!.delta).toEqual({ role: 'assistant' });
    expect(chunks.at(-1)).toMatchObject({ choices: [], usage: { prompt_tokens: 10, completion_tokens: 5 } });
    expect(new Set(chunks.map((chunk) => chunk.id))).toEqual(new Set(['chatcmpl_1']));
  });

  it('numbers tool calls by their order among tool calls, whatever their block index', async () => {
    const call = (index: number, id: string) =>
      eventFrame('contentBlockStart', {
        contentBlockIndex: index,
        start: { toolUse: { toolUseId: id, name: 'get_weather' } },
      });
    const chunks = await run([
      eventFrame('messageStart', { role: 'assistant' }),
      eventFrame('contentBlockDelta', { contentBlockIndex: 0, delta: { reasoningContent: { text: 'hmm' } } }),
      eventFrame('contentBlockDelta', { contentBlockIndex: 1, delta: { text: 'Both:' } }),
      call(2, 'tooluse_a'),
      eventFrame('contentBlockDelta', {
        contentBlockIndex: 2,
        delta: { toolUse: { input: '{"city":"Paris"}' } },
      }),
      call(3, 'tooluse_b'),
      eventFrame('contentBlockDelta', {
        contentBlockIndex: 3,
        delta: { toolUse: { input: '{"city":"Rome"}' } },
      }),
      eventFrame('someFutureEvent', {}),
      eventFrame('messageStop', { stopReason: 'tool_use' }),
    ]);
    const calls = chunks.flatMap((chunk) => chunk.choices[0]?.delta?.tool_calls ?? []);
    expect(calls).toEqual([
      { index: 0, id: 'tooluse_a', type: 'function', function: { name: 'get_weather', arguments: '' } },
      { index: 0, function: { arguments: '{"city":"Paris"}' } },
      { index: 1, id: 'tooluse_b', type: 'function', function: { name: 'get_weather', arguments: '' } },
      { index: 1, function: { arguments: '{"city":"Rome"}' } },
    ]);
    expect(chunks.at(-1)!.choices[0]!.finish_reason).toBe('tool_calls');
    expect(chunks.map((chunk) => chunk.choices[0]?.delta?.content ?? '').join('')).toBe('Both:');
  });

  it.each([
    ['throttlingException', 429],
    ['validationException', 400],
    ['serviceUnavailableException', 503],
    ['modelStreamErrorException', 502],
  ])('turns an exception frame %s into a GatewayError with status %i', async (type, status) => {
    const error = await failure([
      chatStreamFrames[0]!,
      chatStreamFrames[1]!,
      exceptionFrame(type, 'it broke'),
    ]);
    expect(error.status).toBe(status);
    expect(error.type).toBe('upstream_error');
    expect(error.upstream).toBe(true);
    expect(error.code).toBe(type);
    expect(error.message).toContain('it broke');
  });

  it('rejects a frame whose checksum does not match', async () => {
    const broken = Buffer.from(chatStreamFrames[1]!);
    broken[broken.length - 10] = broken[broken.length - 10]! ^ 0xff;
    const error = await failure([chatStreamFrames[0]!, broken]);
    expect(error.status).toBe(502);
    expect(error.message).toContain('corrupt event frame');
  });

  it('rejects a stream that ends inside a frame', async () => {
    const cut = chatStreamFrames[1]!.subarray(0, 20);
    const error = await failure([chatStreamFrames[0]!, cut]);
    expect(error.message).toContain('ended inside an event frame');
  });

  it('rejects a frame length no event can have', async () => {
    const error = await failure([Buffer.from([0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0])]);
    expect(error.message).toContain('impossible length');
  });
});

describe('readBedrockErrorMessage', () => {
  it('reads message and Message', () => {
    expect(readBedrockErrorMessage({ message: 'a' })).toBe('a');
    expect(readBedrockErrorMessage({ Message: 'b' })).toBe('b');
    expect(readBedrockErrorMessage('plain')).toBeUndefined();
  });
});
