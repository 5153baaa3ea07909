// Same-format streams, byte for byte (issue 27), in both modes: for every surface whose format a provider
// speaks (Anthropic Messages, GenAI, Bedrock ConverseStream, OpenAI Responses, OpenAI chat), a stream served by
// that provider reaches the caller exactly as the provider sent it (Gemini's `\r\n\r\n` line breaks included).
// OpenAI chat is gw's own shape: an event gw's translation would change (a finish reason it maps, a tool call
// sent whole) is written as gw's chunk, the others as they came (map-openai-stream.test.ts). The other streams
// open with an event that translates to more than one chat chunk, as real upstreams' first events do: in
// cluster mode the router's gRPC stream once lost the "already relayed" mark of the later chunks, and the
// ingress wrote them again as translated events (a Gemini stream repeated its first chunk).
import { bedrockEventFrame } from '@gw/router/testing';
import {
  anthropicStream,
  chatStreamEvents,
  type LaunchedGateway,
  scaled,
  startFakeBedrock,
} from '@gw/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  closeFakes,
  MODES,
  type SurfaceFakes,
  startFakes,
  surfaceConfig,
  VIRTUAL_KEY,
  withBedrock,
} from './surface-gateway.ts';

const BEDROCK_CREDENTIALS = { accessKeyId: 'AKIAIOSFODNN7EXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG' };

/** Gemini's first event holds the role, a text and a function call; its last the finish and usage (CRLF, as Gemini frames them). */
const GEMINI_STREAM = [
  {
    candidates: [
      {
        content: {
          role: 'model',
          parts: [{ text: 'echo:' }, { functionCall: { name: 'lookup', args: { q: 'x' } } }],
        },
        index: 0,
      },
    ],
    modelVersion: 'gemini-2.5-flash',
    responseId: 'resp-1',
  },
  {
    candidates: [{ content: { role: 'model', parts: [{ text: ' Hello' }] }, finishReason: 'STOP', index: 0 }],
    usageMetadata: { promptTokenCount: 9, candidatesTokenCount: 3, totalTokenCount: 12 },
    modelVersion: 'gemini-2.5-flash',
    responseId: 'resp-1',
  },
].map((event) => `data: ${JSON.stringify(event)}\r\n\r\n`);

/** Responses' events: created, a message item, its text, and the completed response. */
function responsesStream(): string[] {
  const message = {
    id: 'msg_1',
    type: 'message',
    role: 'assistant',
    status: 'completed',
    content: [{ type: 'output_text', text: 'Hi there', annotations: [] }],
  };
  const response = {
    id: 'resp_1',
    object: 'response',
    created_at: 1_700_000_000,
    model: 'gpt-4o',
    output: [message],
    usage: { input_tokens: 5, output_tokens: 2, total_tokens: 7 },
  };
  const events = [
    { type: 'response.created', response: { ...response, status: 'in_progress', output: [] } },
    { type: 'response.output_item.added', output_index: 0, item: { ...message, content: [] } },
    { type: 'response.output_text.delta', item_id: 'msg_1', output_index: 0, content_index: 0, delta: 'Hi' },
    {
      type: 'response.output_text.delta',
      item_id: 'msg_1',
      output_index: 0,
      content_index: 0,
      delta: ' there',
    },
    { type: 'response.output_item.done', output_index: 0, item: message },
    { type: 'response.completed', response: { ...response, status: 'completed' } },
  ];
  return events.map(
    (event, sequence_number) =>
      `event: ${event.type}\ndata: ${JSON.stringify({ ...event, sequence_number })}\n\n`,
  );
}

const BEDROCK_FRAMES = [
  bedrockEventFrame('messageStart', { role: 'assistant' }),
  bedrockEventFrame('contentBlockDelta', { contentBlockIndex: 0, delta: { text: 'Rain' } }),
  bedrockEventFrame('contentBlockDelta', { contentBlockIndex: 0, delta: { text: ' today.' } }),
  bedrockEventFrame('contentBlockStop', { contentBlockIndex: 0 }),
  bedrockEventFrame('messageStop', { stopReason: 'end_turn' }),
  bedrockEventFrame('metadata', {
    usage: { inputTokens: 5, outputTokens: 2, totalTokens: 7 },
    metrics: { latencyMs: 20 },
  }),
];

async function postForBytes(url: string, body: unknown, headers: Record<string, string>) {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(scaled(10_000)),
  });
  return { status: response.status, bytes: Buffer.from(await response.arrayBuffer()) };
}

describe.each(MODES)('same-format streams relayed byte for byte (%s)', (_mode, start) => {
  let fakes: SurfaceFakes;
  let bedrock: Awaited<ReturnType<typeof startFakeBedrock>>;
  let gateway: LaunchedGateway;
  const bearer = { authorization: `Bearer ${VIRTUAL_KEY}` };

  beforeAll(async () => {
    fakes = await startFakes();
    bedrock = await startFakeBedrock({
      credentials: {
        [BEDROCK_CREDENTIALS.accessKeyId]: { secretAccessKey: BEDROCK_CREDENTIALS.secretAccessKey },
      },
      answer: () => ({ frames: BEDROCK_FRAMES }),
    });
    gateway = await start(
      withBedrock(surfaceConfig(fakes), { url: bedrock.url, credentials: BEDROCK_CREDENTIALS }),
    );
  });
  afterAll(async () => {
    await gateway?.close();
    await Promise.all([closeFakes(fakes), bedrock?.close()]);
  });

  it('GenAI served by Gemini', async () => {
    fakes.gemini.enqueue({ sse: GEMINI_STREAM });
    const answer = await postForBytes(
      `${gateway.url}/genai/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse`,
      { contents: [{ role: 'user', parts: [{ text: 'Hello' }] }] },
      { 'x-goog-api-key': VIRTUAL_KEY },
    );
    expect(answer.status).toBe(200);
    expect(answer.bytes.toString('utf8')).toBe(GEMINI_STREAM.join(''));
  });

  it('Anthropic Messages served by Anthropic', async () => {
    const events = anthropicStream({
      model: 'claude-sonnet-4-5',
      pieces: ['Hel', 'lo'],
      toolUse: { id: 'toolu_1', name: 'lookup', json: ['{"q":', '"x"}'] },
    });
    fakes.anthropic.enqueue({ sse: events });
    const answer = await postForBytes(
      `${gateway.url}/anthropic/v1/messages`,
      {
        model: 'claude-sonnet-4-5',
        max_tokens: 64,
        stream: true,
        messages: [{ role: 'user', content: 'Hi' }],
      },
      bearer,
    );
    expect(answer.status).toBe(200);
    expect(answer.bytes.toString('utf8')).toBe(events.join(''));
  });

  it('OpenAI Responses served by OpenAI', async () => {
    const events = responsesStream();
    fakes.openai.enqueue({ sse: events });
    const answer = await postForBytes(
      `${gateway.url}/openai/v1/responses`,
      { model: 'gpt-4o', input: 'Hi', stream: true },
      bearer,
    );
    expect(answer.status).toBe(200);
    expect(answer.bytes.toString('utf8')).toBe(events.join(''));
  });

  it('OpenAI chat served by OpenAI', async () => {
    // As OpenAI sends them: `usage: null` on each chunk (gw asks for usage), members in OpenAI's order, spaces.
    const sent = chatStreamEvents({ model: 'gpt-4o-mini' }).map((data) =>
      data === '[DONE]'
        ? data
        : data
            .replace('"created":', ' "created": ')
            .replace(',"choices"', ', "system_fingerprint":"fp_1","choices"'),
    );
    const events = sent.map((data) => `data: ${data}\n\n`);
    fakes.openai.enqueue({ sse: events });
    const answer = await postForBytes(
      `${gateway.url}/openai/v1/chat/completions`,
      { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hi' }], stream: true },
      bearer,
    );
    expect(answer.status).toBe(200);
    expect(answer.bytes.toString('utf8')).toBe(events.join(''));
  });

  it('Bedrock ConverseStream served by Bedrock', async () => {
    const answer = await postForBytes(
      `${gateway.url}/bedrock/model/${encodeURIComponent('anthropic.claude-sonnet-4-5-20250929-v1:0')}/converse-stream`,
      { messages: [{ role: 'user', content: [{ text: 'Weather?' }] }] },
      bearer,
    );
    expect(answer.status).toBe(200);
    expect(answer.bytes.equals(Buffer.concat(BEDROCK_FRAMES))).toBe(true);
  });
});
