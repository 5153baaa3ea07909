// Converse in, Bedrock out (issue 10, same-format fidelity), in both modes, with the AWS SDK as the client: a
// Converse request served by Bedrock reaches it as the caller sent it (cache points, reasoning content,
// additionalModelRequestFields), and its answer, whole or as ConverseStream events, comes back as Bedrock sent
// it (reasoning deltas included, which chat has no words for). A Bedrock fake checks SigV4 on every call.
import {
  BedrockRuntimeClient,
  ConverseCommand,
  type ConverseCommandInput,
  ConverseStreamCommand,
} from '@aws-sdk/client-bedrock-runtime';
import { bedrockEventFrame } from '@gw/router/testing';
import { type LaunchedGateway, startFakeBedrock } from '@gw/testkit';
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

const CREDENTIALS = {
  accessKeyId: 'AKIAIOSFODNN7EXAMPLE',
  secretAccessKey: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY',
};
const MODEL = 'anthropic.claude-sonnet-4-5-20250929-v1:0';

const REQUEST = {
  modelId: MODEL,
  system: [{ text: 'Be brief.' }, { cachePoint: { type: 'default' } }],
  messages: [
    { role: 'user', content: [{ text: 'Weather?' }] },
    {
      role: 'assistant',
      content: [
        { reasoningContent: { reasoningText: { text: 'Check it.', signature: 'SIG-b-1' } } },
        { toolUse: { toolUseId: 'tu_1', name: 'weather', input: { city: 'Lima' } } },
      ],
    },
    { role: 'user', content: [{ toolResult: { toolUseId: 'tu_1', content: [{ json: { sky: 'grey' } }] } }] },
  ],
  toolConfig: {
    tools: [
      { toolSpec: { name: 'weather', inputSchema: { json: { type: 'object', properties: {} } } } },
      { cachePoint: { type: 'default' } },
    ],
  },
  inferenceConfig: { maxTokens: 2000 },
  additionalModelRequestFields: { thinking: { type: 'enabled', budget_tokens: 1024 } },
} as unknown as ConverseCommandInput;

const ANSWER = {
  output: {
    message: {
      role: 'assistant',
      content: [
        { reasoningContent: { reasoningText: { text: 'Grey means rain.', signature: 'SIG-b-2' } } },
        { text: 'Probably rain.' },
      ],
    },
  },
  stopReason: 'end_turn',
  usage: { inputTokens: 50, outputTokens: 9, totalTokens: 59, cacheReadInputTokens: 40 },
  metrics: { latencyMs: 300 },
};

const STREAM = [
  bedrockEventFrame('messageStart', { role: 'assistant' }),
  bedrockEventFrame('contentBlockDelta', {
    contentBlockIndex: 0,
    delta: { reasoningContent: { text: 'Grey.' } },
  }),
  bedrockEventFrame('contentBlockDelta', {
    contentBlockIndex: 0,
    delta: { reasoningContent: { signature: 'SIG-b-3' } },
  }),
  bedrockEventFrame('contentBlockStop', { contentBlockIndex: 0 }),
  bedrockEventFrame('contentBlockDelta', { contentBlockIndex: 1, delta: { text: 'Rain.' } }),
  bedrockEventFrame('contentBlockStop', { contentBlockIndex: 1 }),
  bedrockEventFrame('messageStop', { stopReason: 'end_turn' }),
  bedrockEventFrame('metadata', {
    usage: { inputTokens: 50, outputTokens: 4, totalTokens: 54 },
    metrics: { latencyMs: 200 },
  }),
];

describe.each(MODES)('/bedrock converse: Bedrock served as it came (%s)', (_mode, start) => {
  let fakes: SurfaceFakes;
  let bedrock: Awaited<ReturnType<typeof startFakeBedrock>>;
  let gateway: LaunchedGateway;
  let client: BedrockRuntimeClient;
  let next: { json: unknown } | { frames: Buffer[] } = { json: ANSWER };

  beforeAll(async () => {
    fakes = await startFakes();
    bedrock = await startFakeBedrock({
      credentials: { [CREDENTIALS.accessKeyId]: { secretAccessKey: CREDENTIALS.secretAccessKey } },
      answer: () => next,
    });
    gateway = await start(withBedrock(surfaceConfig(fakes), { url: bedrock.url, credentials: CREDENTIALS }));
    client = new BedrockRuntimeClient({
      endpoint: `${gateway.url}/bedrock`,
      region: 'us-east-1',
      credentials: { accessKeyId: VIRTUAL_KEY, secretAccessKey: 'not-verified-by-gw' },
      maxAttempts: 1,
    });
  });
  afterAll(async () => {
    client?.destroy();
    await gateway?.close();
    await Promise.all([closeFakes(fakes), bedrock?.close()]);
  });

  it('sends Bedrock the Converse request as it came, and answers what Bedrock answered', async () => {
    next = { json: ANSWER };
    const answer = await client.send(new ConverseCommand(REQUEST));
    expect(answer.output).toEqual(ANSWER.output);
    expect(answer.usage).toMatchObject({ cacheReadInputTokens: 40 });
    const sent = bedrock.requests[bedrock.requests.length - 1]!;
    expect(sent.auth).toMatchObject({ kind: 'sigv4', accessKeyId: CREDENTIALS.accessKeyId });
    const { modelId: _modelId, ...body } = REQUEST as unknown as Record<string, unknown>;
    expect(sent.body).toEqual(body);
  });

  it('relays ConverseStream events as Bedrock sent them, reasoning deltas included', async () => {
    next = { frames: STREAM };
    const answer = await client.send(new ConverseStreamCommand(REQUEST as never));
    const events: Array<Record<string, unknown>> = [];
    for await (const event of answer.stream!) events.push(event as unknown as Record<string, unknown>);
    expect(events.map((event) => Object.keys(event)[0])).toEqual([
      'messageStart',
      'contentBlockDelta',
      'contentBlockDelta',
      'contentBlockStop',
      'contentBlockDelta',
      'contentBlockStop',
      'messageStop',
      'metadata',
    ]);
    expect(events[1]).toMatchObject({
      contentBlockDelta: { delta: { reasoningContent: { text: 'Grey.' } } },
    });
    expect(events[2]).toMatchObject({
      contentBlockDelta: { delta: { reasoningContent: { signature: 'SIG-b-3' } } },
    });
    expect(events[7]).toMatchObject({ metadata: { usage: { outputTokens: 4 } } });
  });

  it('translated for Anthropic, its cache points become cache_control on what they close', async () => {
    await client.send(
      new ConverseCommand({
        modelId: 'anthropic/claude-sonnet-4-5',
        system: [{ text: 'Stable preamble.' }, { cachePoint: { type: 'default' } }],
        messages: [{ role: 'user', content: [{ text: 'Question' }, { cachePoint: { type: 'default' } }] }],
      } as unknown as ConverseCommandInput),
    );
    expect(fakes.anthropic.last().body).toMatchObject({
      model: 'claude-sonnet-4-5',
      system: [{ type: 'text', text: 'Stable preamble.', cache_control: { type: 'ephemeral' } }],
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'Question', cache_control: { type: 'ephemeral' } }] },
      ],
    });
  });
});
