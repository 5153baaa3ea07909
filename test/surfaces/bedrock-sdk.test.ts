// The `/bedrock` surface with the official AWS SDK (@aws-sdk/client-bedrock-runtime) as the client, with its
// default request handler (HTTP/2 over cleartext), in both modes: Converse and ConverseStream (binary
// event stream) with tools, InvokeModel and InvokeModelWithResponseStream in Anthropic-on-Bedrock form,
// answered by fake OpenAI and Anthropic upstreams; errors raise the SDK's modelled exceptions.
import { createServer } from 'node:http';
import { connect } from 'node:http2';
import type { AddressInfo } from 'node:net';
import {
  AccessDeniedException,
  BedrockRuntimeClient,
  type ContentBlock,
  ConverseCommand,
  ConverseStreamCommand,
  InvokeModelCommand,
  InvokeModelWithResponseStreamCommand,
  ThrottlingException,
  ValidationException,
} from '@aws-sdk/client-bedrock-runtime';
import { anthropicMessage, chatCompletion, type LaunchedGateway, toolCallStreamEvents } from '@gw/testkit';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  closeFakes,
  MODES,
  PROVIDER_KEYS,
  type SurfaceFakes,
  startFakes,
  surfaceConfig,
  VIRTUAL_KEY,
} from './surface-gateway.ts';

const WEATHER_TOOL = {
  toolSpec: {
    name: 'get_weather',
    description: 'Current weather of a city',
    inputSchema: { json: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } },
  },
};

const toolStream = () =>
  toolCallStreamEvents({
    id: 'chatcmpl-b',
    text: 'Checking.',
    callId: 'call_b2',
    name: 'get_weather',
    fragments: ['{"city":', '"Lima"}'],
    usage: { prompt_tokens: 14, completion_tokens: 6, total_tokens: 20 },
  });

describe.each(MODES)('AWS SDK (Bedrock Runtime) → /bedrock (%s)', (_mode, start) => {
  let fakes: SurfaceFakes;
  let gateway: LaunchedGateway;
  /** The SDK's defaults: HTTP/2 cleartext handler, SigV4 with the virtual key as access key id. */
  let client: BedrockRuntimeClient;

  beforeAll(async () => {
    fakes = await startFakes();
    gateway = await start(surfaceConfig(fakes));
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
    await closeFakes(fakes);
  });

  it('serves HTTP/2 cleartext and HTTP/1.1 on the same port', async () => {
    const session = connect(gateway.url);
    const status = await new Promise<number>((resolve, reject) => {
      const stream = session.request({ ':path': '/health' });
      stream.on('response', (headers) => resolve(Number(headers[':status'])));
      stream.on('error', reject);
      stream.resume();
    });
    session.close();
    expect(status).toBe(200);
    expect((await fetch(`${gateway.url}/health`)).status).toBe(200);

    // The SDK's default handler really speaks h2c: against an HTTP/1.1-only server it cannot even start.
    const http1Only = createServer((_request, response) => response.end('{}'));
    await new Promise<void>((resolve) => http1Only.listen(0, '127.0.0.1', resolve));
    const { port } = http1Only.address() as AddressInfo;
    const probe = new BedrockRuntimeClient({
      endpoint: `http://127.0.0.1:${port}/bedrock`,
      region: 'us-east-1',
      credentials: { accessKeyId: VIRTUAL_KEY, secretAccessKey: 'x' },
      maxAttempts: 1,
      requestHandler: { requestTimeout: 2_000 },
    });
    await expect(
      probe.send(
        new ConverseCommand({ modelId: 'm', messages: [{ role: 'user', content: [{ text: 'hi' }] }] }),
      ),
    ).rejects.toThrow();
    probe.destroy();
    http1Only.closeAllConnections();
    http1Only.close();
  });

  it('converses with tools, answered by Anthropic', async () => {
    fakes.anthropic.enqueue({
      json: anthropicMessage({ toolUse: { id: 'toolu_b1', name: 'get_weather', input: { city: 'Paris' } } }),
    });
    const first = await client.send(
      new ConverseCommand({
        modelId: 'anthropic/claude-opus-4-7',
        system: [{ text: 'Be brief.' }],
        messages: [{ role: 'user', content: [{ text: 'Weather in Paris?' }] }],
        toolConfig: { tools: [WEATHER_TOOL], toolChoice: { any: {} } },
        inferenceConfig: { maxTokens: 100, temperature: 0.1 },
      }),
    );
    expect(first.stopReason).toBe('tool_use');
    expect(first.output?.message?.content).toEqual([
      { toolUse: { toolUseId: 'toolu_b1', name: 'get_weather', input: { city: 'Paris' } } },
    ]);
    expect(first.usage).toMatchObject({ inputTokens: 12, outputTokens: 6 });
    const sent = fakes.anthropic.last();
    expect(sent.headers['x-api-key']).toBe(PROVIDER_KEYS.anthropic);
    expect(sent.body).toMatchObject({
      model: 'claude-opus-4-7',
      max_tokens: 100,
      temperature: 0.1,
      tool_choice: { type: 'any' },
      tools: [{ name: 'get_weather', input_schema: WEATHER_TOOL.toolSpec.inputSchema.json }],
    });

    await client.send(
      new ConverseCommand({
        modelId: 'anthropic/claude-opus-4-7',
        messages: [
          { role: 'user', content: [{ text: 'Weather in Paris?' }] },
          { role: 'assistant', content: first.output!.message!.content as ContentBlock[] },
          {
            role: 'user',
            content: [{ toolResult: { toolUseId: 'toolu_b1', content: [{ json: { celsius: 21 } }] } }],
          },
        ],
        toolConfig: { tools: [WEATHER_TOOL] },
      }),
    );
    const messages = (fakes.anthropic.last().body as { messages: unknown[] }).messages;
    expect(messages[1]).toMatchObject({ role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_b1' }] });
    expect(messages[2]).toMatchObject({
      role: 'user',
      content: [{ type: 'tool_result', tool_use_id: 'toolu_b1', content: '{"celsius":21}' }],
    });
  });

  it('streams Converse as a binary event stream, text and tool input', async () => {
    const answer = await client.send(
      new ConverseStreamCommand({
        modelId: 'openai/gpt-4o-mini',
        messages: [{ role: 'user', content: [{ text: 'Say hello' }] }],
      }),
    );
    let text = '';
    const kinds: string[] = [];
    let stopReason: string | undefined;
    let usage: unknown;
    for await (const event of answer.stream!) {
      kinds.push(Object.keys(event).find((key) => key !== '$unknown')!);
      text += event.contentBlockDelta?.delta?.text ?? '';
      stopReason ??= event.messageStop?.stopReason;
      usage ??= event.metadata?.usage;
    }
    expect(text).toBe('Hello wörld');
    expect(stopReason).toBe('end_turn');
    expect(usage).toMatchObject({ inputTokens: 9, outputTokens: 3, totalTokens: 12 });
    expect(kinds[0]).toBe('messageStart');
    expect(kinds.slice(-2)).toEqual(['messageStop', 'metadata']);
    expect(fakes.openai.last().headers.authorization).toBe(`Bearer ${PROVIDER_KEYS.openai}`);

    fakes.openai.enqueue({ events: toolStream() });
    const tools = await client.send(
      new ConverseStreamCommand({
        modelId: 'openai/gpt-4o-mini',
        messages: [{ role: 'user', content: [{ text: 'Weather in Lima?' }] }],
        toolConfig: { tools: [WEATHER_TOOL] },
      }),
    );
    let input = '';
    let toolStart: unknown;
    let toolStop: string | undefined;
    for await (const event of tools.stream!) {
      toolStart ??= event.contentBlockStart?.start?.toolUse;
      input += event.contentBlockDelta?.delta?.toolUse?.input ?? '';
      toolStop ??= event.messageStop?.stopReason;
    }
    expect(toolStart).toEqual({ toolUseId: 'call_b2', name: 'get_weather' });
    expect(JSON.parse(input)).toEqual({ city: 'Lima' });
    expect(toolStop).toBe('tool_use');
  });

  it('invokes with an Anthropic-on-Bedrock body, whole and streamed', async () => {
    const body = {
      anthropic_version: 'bedrock-2023-05-31',
      max_tokens: 50,
      messages: [{ role: 'user', content: 'Hi' }],
    };
    const whole = await client.send(
      new InvokeModelCommand({
        modelId: 'openai/gpt-4o-mini',
        contentType: 'application/json',
        body: JSON.stringify(body),
      }),
    );
    expect(JSON.parse(Buffer.from(whole.body).toString('utf8'))).toMatchObject({
      type: 'message',
      role: 'assistant',
      content: [{ type: 'text', text: 'Hello from the fake upstream' }],
      stop_reason: 'end_turn',
    });
    expect(fakes.openai.last().body).toMatchObject({ model: 'gpt-4o-mini', max_tokens: 50 });

    const streamed = await client.send(
      new InvokeModelWithResponseStreamCommand({
        modelId: 'openai/gpt-4o-mini',
        contentType: 'application/json',
        body: JSON.stringify(body),
      }),
    );
    const events: Array<{ type: string; delta?: { text?: string }; message?: { usage?: unknown } }> = [];
    for await (const part of streamed.body!) {
      events.push(JSON.parse(Buffer.from(part.chunk!.bytes!).toString('utf8')));
    }
    // gw's estimate of the prompt first (the provider reports its count at the end, in the metrics).
    expect(events[0]).toMatchObject({
      type: 'message_start',
      message: { usage: { input_tokens: expect.any(Number), output_tokens: 0 } },
    });
    expect((events[0]!.message!.usage as { input_tokens: number }).input_tokens).toBeGreaterThan(0);
    expect(events[events.length - 1]).toMatchObject({
      type: 'message_stop',
      'amazon-bedrock-invocationMetrics': { inputTokenCount: 9, outputTokenCount: 3 },
    });
    expect(events.map((event) => event.delta?.text ?? '').join('')).toBe('Hello wörld');
  });

  it('raises ThrottlingException, ValidationException and AccessDeniedException', async () => {
    const converse = (bedrock: BedrockRuntimeClient, modelId = 'openai/gpt-4o-mini') =>
      bedrock.send(new ConverseCommand({ modelId, messages: [{ role: 'user', content: [{ text: 'hi' }] }] }));
    fakes.openai.enqueue({
      status: 429,
      json: { error: { message: 'Rate limit reached', type: 'requests' } },
    });
    const throttled = await converse(client).catch((error: unknown) => error);
    expect(throttled).toBeInstanceOf(ThrottlingException);
    expect((throttled as ThrottlingException).$metadata.httpStatusCode).toBe(429);
    fakes.openai.enqueue({
      status: 400,
      json: { error: { message: 'bad request', type: 'invalid_request_error' } },
    });
    await expect(converse(client)).rejects.toBeInstanceOf(ValidationException);
    // A Bedrock model id (`:` arrives as %3A) goes to the bedrock provider, which this key does not allow.
    const denied = await converse(client, 'anthropic.claude-3-5-sonnet-20240620-v1:0').catch(
      (error: unknown) => error,
    );
    expect(denied).toBeInstanceOf(AccessDeniedException);
    expect((denied as Error).message).toContain("'bedrock'");
  });

  it('takes the virtual key as a bearer token (AWS_BEARER_TOKEN_BEDROCK) and over HTTP/1.1', async () => {
    const bearer = new BedrockRuntimeClient({
      endpoint: `${gateway.url}/bedrock`,
      region: 'us-east-1',
      token: { token: VIRTUAL_KEY },
      authSchemePreference: ['httpBearerAuth'],
      requestHandler: new NodeHttpHandler(),
      maxAttempts: 1,
    });
    fakes.openai.enqueue({ json: chatCompletion({ content: 'via bearer' }) });
    const answer = await bearer.send(
      new ConverseCommand({
        modelId: 'openai/gpt-4o-mini',
        messages: [{ role: 'user', content: [{ text: 'hi' }] }],
      }),
    );
    expect(answer.output?.message?.content).toEqual([{ text: 'via bearer' }]);
    bearer.destroy();
    const stranger = new BedrockRuntimeClient({
      endpoint: `${gateway.url}/bedrock`,
      region: 'us-east-1',
      token: { token: 'sk-gw-unknown' },
      authSchemePreference: ['httpBearerAuth'],
      maxAttempts: 1,
    });
    await expect(
      stranger.send(
        new ConverseCommand({
          modelId: 'openai/gpt-4o-mini',
          messages: [{ role: 'user', content: [{ text: 'hi' }] }],
        }),
      ),
    ).rejects.toBeInstanceOf(AccessDeniedException);
    stranger.destroy();
  });
});
