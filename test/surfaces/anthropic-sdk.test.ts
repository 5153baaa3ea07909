// The `/anthropic` surface with the official Anthropic SDK as the client, both the 1.x line (virtual key as
// `Authorization: Bearer`) and the 0.x line (`x-api-key`), in both modes: messages whole and streamed, tools
// both ways, images, count_tokens, answered by OpenAI (a fake OpenAI upstream); errors raise the SDK's own
// exception classes.
import Anthropic from '@anthropic-ai/sdk';
import Anthropic0 from '@anthropic-ai/sdk-0';
import { chatCompletion, type LaunchedGateway, toolCallStreamEvents } from '@gw/testkit';
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
  name: 'get_weather',
  description: 'Current weather of a city',
  input_schema: {
    type: 'object' as const,
    properties: { city: { type: 'string' } },
    required: ['city'],
  },
};

const TOOL_CALL = {
  id: 'call_weather_1',
  type: 'function',
  function: { name: 'get_weather', arguments: '{"city":"Paris"}' },
};

const toolCallStream = () =>
  toolCallStreamEvents({
    model: 'gpt-4o',
    text: 'Let me check.',
    callId: 'call_weather_2',
    name: 'get_weather',
    fragments: ['', '{"city":', '"Paris"}'],
    usage: { prompt_tokens: 20, completion_tokens: 9, total_tokens: 29 },
  });

/** Headers of the last request an SDK sent to gw (recorded by a fetch wrapper). */
let lastSent = new Headers();
const recordingFetch: typeof fetch = (input, init) => {
  lastSent = new Headers(init?.headers);
  return fetch(input, init);
};

const SDKS = [
  [
    '1.x, bearer',
    (baseURL: string, apiKey: string) =>
      new Anthropic({ baseURL, apiKey, maxRetries: 0, fetch: recordingFetch }),
  ],
  [
    '0.x, x-api-key',
    (baseURL: string, apiKey: string) =>
      new Anthropic0({ baseURL, apiKey, maxRetries: 0, fetch: recordingFetch }),
  ],
] as const;

describe.each(MODES)('Anthropic SDK → /anthropic → OpenAI (%s)', (_mode, start) => {
  let fakes: SurfaceFakes;
  let gateway: LaunchedGateway;

  beforeAll(async () => {
    fakes = await startFakes();
    gateway = await start(surfaceConfig(fakes));
  });
  afterAll(async () => {
    await gateway?.close();
    await closeFakes(fakes);
  });

  describe.each(SDKS)('SDK %s', (line, create) => {
    const client = () => create(`${gateway.url}/anthropic`, VIRTUAL_KEY) as Anthropic;

    it('sends the virtual key the way this SDK line does, and gw’s key upstream', async () => {
      const message = await client().messages.create({
        model: 'openai/gpt-4o',
        max_tokens: 64,
        system: 'Be brief.',
        messages: [{ role: 'user', content: 'Hi' }],
      });
      expect(message).toMatchObject({
        type: 'message',
        role: 'assistant',
        content: [{ type: 'text', text: 'Hello from the fake upstream' }],
        stop_reason: 'end_turn',
        usage: { input_tokens: 9, output_tokens: 7, cache_read_input_tokens: 2 },
      });
      const sent = fakes.openai.last();
      expect(sent.headers.authorization).toBe(`Bearer ${PROVIDER_KEYS.openai}`);
      expect(sent.headers['x-api-key']).toBeUndefined();
      expect(sent.body).toMatchObject({
        model: 'gpt-4o',
        max_tokens: 64,
        messages: [
          { role: 'system', content: 'Be brief.' },
          { role: 'user', content: 'Hi' },
        ],
      });
      if (line.startsWith('1')) {
        expect(lastSent.get('authorization')).toBe(`Bearer ${VIRTUAL_KEY}`);
        expect(lastSent.get('x-api-key')).toBeNull();
      } else {
        expect(lastSent.get('x-api-key')).toBe(VIRTUAL_KEY);
        expect(lastSent.get('authorization')).toBeNull();
      }
    });

    it('calls tools, sends results back, and passes images', async () => {
      fakes.openai.enqueue({
        json: chatCompletion({ content: null, model: 'gpt-4o', toolCalls: [TOOL_CALL] }),
      });
      const first = await client().messages.create({
        model: 'openai/gpt-4o',
        max_tokens: 64,
        tools: [WEATHER_TOOL],
        tool_choice: { type: 'any' },
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'Weather where this photo was taken?' },
              { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
            ],
          },
        ],
      });
      expect(first.stop_reason).toBe('tool_use');
      expect(first.content).toEqual([
        { type: 'tool_use', id: 'call_weather_1', name: 'get_weather', input: { city: 'Paris' } },
      ]);
      expect(fakes.openai.last().body).toMatchObject({
        tool_choice: 'required',
        tools: [
          { type: 'function', function: { name: 'get_weather', parameters: WEATHER_TOOL.input_schema } },
        ],
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'Weather where this photo was taken?' },
              { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
            ],
          },
        ],
      });

      await client().messages.create({
        model: 'openai/gpt-4o',
        max_tokens: 64,
        tools: [WEATHER_TOOL],
        messages: [
          { role: 'user', content: 'Weather in Paris?' },
          { role: 'assistant', content: first.content },
          {
            role: 'user',
            content: [{ type: 'tool_result', tool_use_id: 'call_weather_1', content: '{"celsius":21}' }],
          },
        ],
      });
      expect((fakes.openai.last().body as { messages: unknown[] }).messages.slice(1)).toEqual([
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            {
              type: 'function',
              id: 'call_weather_1',
              function: { name: 'get_weather', arguments: '{"city":"Paris"}' },
            },
          ],
        },
        { role: 'tool', tool_call_id: 'call_weather_1', content: '{"celsius":21}' },
      ]);
    });

    it('streams text and tool input as Anthropic events', async () => {
      const stream = client().messages.stream({
        model: 'openai/gpt-4o',
        max_tokens: 64,
        messages: [{ role: 'user', content: 'Say hello' }],
      });
      let text = '';
      stream.on('text', (piece) => {
        text += piece;
      });
      const final = await stream.finalMessage();
      expect(text).toBe('Hello wörld');
      expect(final).toMatchObject({
        content: [{ type: 'text', text: 'Hello wörld' }],
        stop_reason: 'end_turn',
        usage: { input_tokens: 9, output_tokens: 3 },
      });

      fakes.openai.enqueue({ events: toolCallStream() });
      const events: string[] = [];
      const raw = await client().messages.create({
        model: 'openai/gpt-4o',
        max_tokens: 64,
        tools: [WEATHER_TOOL],
        messages: [{ role: 'user', content: 'Weather in Paris?' }],
        stream: true,
      });
      let announced: unknown;
      for await (const event of raw) {
        events.push(event.type);
        if (event.type === 'message_start') announced = event.message.usage;
      }
      // gw's estimate of the prompt, tools included, above the provider's 20: the SDK's final 20 (below) is
      // message_delta's figure taken over message_start's.
      expect(announced).toEqual({ input_tokens: expect.any(Number), output_tokens: 0 });
      expect((announced as { input_tokens: number }).input_tokens).toBeGreaterThan(20);
      expect(events).toEqual([
        'message_start',
        'content_block_start',
        'content_block_delta',
        'content_block_stop',
        'content_block_start',
        'content_block_delta',
        'content_block_delta',
        'content_block_stop',
        'message_delta',
        'message_stop',
      ]);

      fakes.openai.enqueue({ events: toolCallStream() });
      const toolFinal = await client()
        .messages.stream({
          model: 'openai/gpt-4o',
          max_tokens: 64,
          tools: [WEATHER_TOOL],
          messages: [{ role: 'user', content: 'Weather in Paris?' }],
        })
        .finalMessage();
      expect(toolFinal.content).toEqual([
        { type: 'text', text: 'Let me check.' },
        { type: 'tool_use', id: 'call_weather_2', name: 'get_weather', input: { city: 'Paris' } },
      ]);
      expect(toolFinal.stop_reason).toBe('tool_use');
      expect(toolFinal.usage).toMatchObject({ input_tokens: 20, output_tokens: 9 });
    });

    it('raises RateLimitError, BadRequestError and AuthenticationError', async () => {
      const ask = (anthropic: Anthropic) =>
        anthropic.messages.create({
          model: 'openai/gpt-4o',
          max_tokens: 8,
          messages: [{ role: 'user', content: 'hi' }],
        });
      const Sdk = line.startsWith('1') ? Anthropic : Anthropic0;
      fakes.openai.enqueue({
        status: 429,
        json: { error: { message: 'Rate limit reached', type: 'requests', code: 'rate_limit_exceeded' } },
      });
      const limited = await ask(client()).catch((error: unknown) => error);
      expect(limited).toBeInstanceOf(Sdk.RateLimitError);
      expect((limited as { error: unknown }).error).toMatchObject({
        type: 'error',
        error: { type: 'rate_limit_error', message: expect.stringContaining('Rate limit reached') },
      });
      fakes.openai.enqueue({
        status: 400,
        json: { error: { message: 'bad messages', type: 'invalid_request_error' } },
      });
      await expect(ask(client())).rejects.toBeInstanceOf(Sdk.BadRequestError);
      await expect(
        ask(create(`${gateway.url}/anthropic`, 'sk-gw-unknown') as Anthropic),
      ).rejects.toBeInstanceOf(Sdk.AuthenticationError);
    });
  });

  it('counts tokens: Anthropic’s own counter for claude, gw’s estimate for others; lists Anthropic models', async () => {
    const client = new Anthropic({ baseURL: `${gateway.url}/anthropic`, apiKey: VIRTUAL_KEY, maxRetries: 0 });
    const counted = await client.messages.countTokens({
      model: 'claude-opus-4-7',
      messages: [{ role: 'user', content: 'Hi' }],
    });
    expect(counted.input_tokens).toBe(42);
    expect(fakes.anthropic.last()).toMatchObject({
      path: '/v1/messages/count_tokens',
      headers: { 'x-api-key': PROVIDER_KEYS.anthropic },
      body: { model: 'claude-opus-4-7' },
    });
    const estimated = await client.messages.countTokens({
      model: 'openai/gpt-4o',
      messages: [{ role: 'user', content: 'Hi' }],
    });
    expect(estimated.input_tokens).toBeGreaterThan(0);
    const models = await client.models.list();
    expect(models.data.map((model) => model.id)).toEqual(['claude-opus-4-7']);
  });

  it('serves claude-… models with Anthropic itself', async () => {
    const client = new Anthropic0({
      baseURL: `${gateway.url}/anthropic`,
      apiKey: VIRTUAL_KEY,
      maxRetries: 0,
    });
    const message = await client.messages.create({
      model: 'claude-opus-4-7',
      max_tokens: 32,
      top_k: 5,
      messages: [{ role: 'user', content: 'Hi' }],
    });
    expect(message.content).toEqual([{ type: 'text', text: 'Hello from Claude' }]);
    expect(fakes.anthropic.last().body).toMatchObject({ model: 'claude-opus-4-7', top_k: 5 });
  });
});
