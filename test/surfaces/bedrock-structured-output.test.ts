// Structured output served by Bedrock (issue 27 item 5): Converse has none, so gw asks for it as LiteLLM and
// Bifrost do, with a tool whose input schema is the response schema and a toolChoice that forces it, and
// answers the tool's input as the message's JSON content, whole and streamed. Checked against the fake
// Bedrock (SigV4 verified): the request it received, and the answer the caller got.
import { bedrockEventFrame } from '@gw/router/testing';
import { type FakeBedrockRequest, type LaunchedGateway, scaled, startFakeBedrock } from '@gw/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { post, postForText } from '../support/http.ts';
import {
  closeFakes,
  MODES,
  type SurfaceFakes,
  startFakes,
  surfaceConfig,
  VIRTUAL_KEY,
  withBedrock,
} from './surface-gateway.ts';

const CREDENTIALS = { accessKeyId: 'AKIAIOSFODNN7EXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG' };
const MODEL = 'bedrock/anthropic.claude-sonnet-4-5-20250929-v1:0';
const SCHEMA = {
  type: 'object',
  properties: { city: { type: 'string' }, country: { type: 'string' } },
  required: ['city', 'country'],
};
const REQUEST = {
  model: MODEL,
  messages: [{ role: 'user', content: 'Where is the Louvre?' }],
  response_format: { type: 'json_schema', json_schema: { name: 'place', schema: SCHEMA, strict: true } },
};
const PLACE = { city: 'Paris', country: 'France' };

const TOOL_ANSWER = {
  output: {
    message: {
      role: 'assistant',
      content: [{ toolUse: { toolUseId: 'tooluse_1', name: 'json_tool_call', input: PLACE } }],
    },
  },
  stopReason: 'tool_use',
  usage: { inputTokens: 30, outputTokens: 12, totalTokens: 42 },
  metrics: { latencyMs: 100 },
};

const TOOL_STREAM = [
  bedrockEventFrame('messageStart', { role: 'assistant' }),
  bedrockEventFrame('contentBlockStart', {
    contentBlockIndex: 0,
    start: { toolUse: { toolUseId: 'tooluse_2', name: 'json_tool_call' } },
  }),
  bedrockEventFrame('contentBlockDelta', {
    contentBlockIndex: 0,
    delta: { toolUse: { input: '{"city":"Paris",' } },
  }),
  bedrockEventFrame('contentBlockDelta', {
    contentBlockIndex: 0,
    delta: { toolUse: { input: '"country":"France"}' } },
  }),
  bedrockEventFrame('contentBlockStop', { contentBlockIndex: 0 }),
  bedrockEventFrame('messageStop', { stopReason: 'tool_use' }),
  bedrockEventFrame('metadata', {
    usage: { inputTokens: 30, outputTokens: 12, totalTokens: 42 },
    metrics: { latencyMs: 100 },
  }),
];

describe.each(MODES)('structured output served by Bedrock through a forced tool (%s)', (_mode, start) => {
  let fakes: SurfaceFakes;
  let bedrock: Awaited<ReturnType<typeof startFakeBedrock>>;
  let gateway: LaunchedGateway;
  const received: FakeBedrockRequest[] = [];

  beforeAll(async () => {
    fakes = await startFakes();
    bedrock = await startFakeBedrock({
      credentials: { [CREDENTIALS.accessKeyId]: { secretAccessKey: CREDENTIALS.secretAccessKey } },
      answer: (request) => {
        received.push(request);
        return request.path.endsWith('/converse-stream') ? { frames: TOOL_STREAM } : { json: TOOL_ANSWER };
      },
    });
    gateway = await start(withBedrock(surfaceConfig(fakes), { url: bedrock.url, credentials: CREDENTIALS }));
  }, scaled(60_000));
  afterAll(async () => {
    await gateway?.close();
    await Promise.all([closeFakes(fakes), bedrock?.close()]);
  });

  const headers = { authorization: `Bearer ${VIRTUAL_KEY}` };

  it('asks Bedrock for the schema as a forced tool, and answers its input as the JSON content', async () => {
    const answer = await post(`${gateway.url}/v1/chat/completions`, REQUEST, { headers });
    expect(answer.status).toBe(200);
    expect(answer.body.choices[0]).toMatchObject({
      message: { role: 'assistant', content: JSON.stringify(PLACE) },
      finish_reason: 'stop',
    });
    expect(answer.body.choices[0].message.tool_calls).toBeUndefined();
    expect(JSON.parse(answer.body.choices[0].message.content)).toEqual(PLACE);

    const sent = received.at(-1)!;
    expect(sent.path).toContain('/converse');
    expect(sent.body).toMatchObject({
      messages: [{ role: 'user', content: [{ text: 'Where is the Louvre?' }] }],
      toolConfig: {
        tools: [{ toolSpec: { name: 'json_tool_call', inputSchema: { json: SCHEMA } } }],
        toolChoice: { tool: { name: 'json_tool_call' } },
      },
    });
    expect(JSON.stringify(sent.body)).not.toContain('response_format');
  });

  it('streams the tool’s input as content deltas, finishing with stop', async () => {
    const answer = await postForText(
      `${gateway.url}/v1/chat/completions`,
      { ...REQUEST, stream: true },
      headers,
    );
    expect(answer.status).toBe(200);
    const chunks = answer.text
      .split('\n\n')
      .filter((event) => event.startsWith('data: {'))
      .map((event) => JSON.parse(event.slice('data: '.length)));
    const content = chunks.map((chunk) => chunk.choices[0]?.delta?.content ?? '').join('');
    expect(JSON.parse(content)).toEqual(PLACE);
    expect(chunks.some((chunk) => chunk.choices[0]?.delta?.tool_calls)).toBe(false);
    expect(chunks.map((chunk) => chunk.choices[0]?.finish_reason).filter(Boolean)).toEqual(['stop']);
    expect(received.at(-1)!.path).toContain('/converse-stream');
    expect(received.at(-1)!.body).toMatchObject({
      toolConfig: { toolChoice: { tool: { name: 'json_tool_call' } } },
    });
  });
});
