// The `/openai` surface with the official `openai` SDK as the client, in both modes: chat (tools both ways,
// streaming), responses (streaming events, function calls), embeddings, served by providers other than
// OpenAI (fake Anthropic and Gemini upstreams); upstream errors raise the SDK's own exception classes.
import { anthropicError, anthropicMessage, anthropicStream, type LaunchedGateway } from '@gw/testkit';
import OpenAI from 'openai';
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
  type: 'function' as const,
  function: {
    name: 'get_weather',
    description: 'Current weather of a city',
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  },
};

describe.each(MODES)('OpenAI SDK → /openai → Anthropic (%s)', (_mode, start) => {
  let fakes: SurfaceFakes;
  let gateway: LaunchedGateway;
  let client: OpenAI;

  beforeAll(async () => {
    fakes = await startFakes();
    gateway = await start(surfaceConfig(fakes));
    client = new OpenAI({ apiKey: VIRTUAL_KEY, baseURL: `${gateway.url}/openai/v1`, maxRetries: 0 });
  });
  afterAll(async () => {
    await gateway?.close();
    await closeFakes(fakes);
  });

  it('calls a tool and sends its result back, translated both ways', async () => {
    fakes.anthropic.enqueue({
      json: anthropicMessage({ toolUse: { id: 'toolu_01', name: 'get_weather', input: { city: 'Paris' } } }),
    });
    const first = await client.chat.completions.create({
      model: 'anthropic/claude-opus-4-7',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Weather in Paris?' },
      ],
      tools: [WEATHER_TOOL],
      max_tokens: 100,
    });
    const call = first.choices[0]!.message.tool_calls![0]!;
    expect(first.choices[0]!.finish_reason).toBe('tool_calls');
    expect(call).toMatchObject({
      id: 'toolu_01',
      type: 'function',
      function: { name: 'get_weather', arguments: '{"city":"Paris"}' },
    });
    const sent = fakes.anthropic.last();
    expect(sent.path).toBe('/v1/messages');
    expect(sent.headers['x-api-key']).toBe(PROVIDER_KEYS.anthropic);
    expect(JSON.stringify(sent.headers)).not.toContain(VIRTUAL_KEY);
    expect(sent.body).toMatchObject({
      model: 'claude-opus-4-7',
      max_tokens: 100,
      tools: [{ name: 'get_weather', input_schema: WEATHER_TOOL.function.parameters }],
      messages: [{ role: 'user' }],
    });
    expect(JSON.stringify((sent.body as { system: unknown }).system)).toContain('Be brief.');

    const second = await client.chat.completions.create({
      model: 'anthropic/claude-opus-4-7',
      messages: [
        { role: 'user', content: 'Weather in Paris?' },
        first.choices[0]!.message,
        { role: 'tool', tool_call_id: call.id, content: '{"celsius":21}' },
      ],
      tools: [WEATHER_TOOL],
    });
    expect(second.choices[0]!.message.content).toBe('Hello from Claude');
    // Members OpenAI's schema requires of every answer, which Anthropic has no words for.
    expect(second.choices[0]).toMatchObject({ logprobs: null, message: { refusal: null } });
    const messages = (fakes.anthropic.last().body as { messages: Array<{ role: string; content: unknown }> })
      .messages;
    expect(messages[1]).toMatchObject({
      role: 'assistant',
      content: [{ type: 'tool_use', id: 'toolu_01', name: 'get_weather', input: { city: 'Paris' } }],
    });
    expect(messages[2]).toMatchObject({
      role: 'user',
      content: [{ type: 'tool_result', tool_use_id: 'toolu_01' }],
    });
  });

  it('streams chat chunks, tool call arguments included', async () => {
    const stream = await client.chat.completions.create({
      model: 'anthropic/claude-opus-4-7',
      messages: [{ role: 'user', content: 'Say hello' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    let usage: OpenAI.CompletionUsage | null | undefined;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
      if (chunk.usage) usage = chunk.usage;
    }
    expect(text).toBe('Hello Claude');
    expect(usage).toMatchObject({ prompt_tokens: 10, completion_tokens: 7 });
    expect(fakes.anthropic.last().body).toMatchObject({ stream: true });

    fakes.anthropic.enqueue({
      sse: anthropicStream({
        pieces: [],
        toolUse: { id: 'toolu_02', name: 'get_weather', json: ['{"city":', '"Paris"}'] },
      }),
    });
    const runner = client.chat.completions.stream({
      model: 'anthropic/claude-opus-4-7',
      messages: [{ role: 'user', content: 'Weather in Paris?' }],
      tools: [WEATHER_TOOL],
    });
    const final = await runner.finalChatCompletion();
    expect(final.choices[0]!.message.tool_calls![0]).toMatchObject({
      id: 'toolu_02',
      function: { name: 'get_weather', arguments: '{"city":"Paris"}' },
    });
  });

  it('answers the Responses API, whole and streamed, with function calls', async () => {
    const tool = {
      type: 'function' as const,
      name: 'get_weather',
      parameters: WEATHER_TOOL.function.parameters,
      strict: false,
    };
    const response = await client.responses.create({
      model: 'anthropic/claude-opus-4-7',
      instructions: 'Be brief.',
      input: 'Hi',
    });
    expect(response.output_text).toBe('Hello from Claude');
    expect(response.usage).toMatchObject({ input_tokens: 12, output_tokens: 6, total_tokens: 18 });
    expect(fakes.anthropic.last().body).toMatchObject({
      messages: [{ role: 'user', content: [{ text: 'Hi' }] }],
    });

    fakes.anthropic.enqueue({
      json: anthropicMessage({ toolUse: { id: 'toolu_03', name: 'get_weather', input: { city: 'Oslo' } } }),
    });
    const withTool = await client.responses.create({
      model: 'anthropic/claude-opus-4-7',
      input: [{ role: 'user', content: 'Weather in Oslo?' }],
      tools: [tool],
    });
    const functionCall = withTool.output.find((item) => item.type === 'function_call');
    expect(functionCall).toMatchObject({
      call_id: 'toolu_03',
      name: 'get_weather',
      arguments: '{"city":"Oslo"}',
    });

    // The function's output goes back as an input item.
    await client.responses.create({
      model: 'anthropic/claude-opus-4-7',
      input: [
        { role: 'user', content: 'Weather in Oslo?' },
        { type: 'function_call', call_id: 'toolu_03', name: 'get_weather', arguments: '{"city":"Oslo"}' },
        { type: 'function_call_output', call_id: 'toolu_03', output: '{"celsius":3}' },
      ],
      tools: [tool],
    });
    const sent = (fakes.anthropic.last().body as { messages: Array<{ content: unknown }> }).messages;
    expect(sent[1]).toMatchObject({ role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_03' }] });
    expect(sent[2]).toMatchObject({
      role: 'user',
      content: [{ type: 'tool_result', tool_use_id: 'toolu_03' }],
    });

    const stream = client.responses.stream({ model: 'anthropic/claude-opus-4-7', input: 'Say hello' });
    const types: string[] = [];
    for await (const event of stream) types.push(event.type);
    const final = await stream.finalResponse();
    expect(final.output_text).toBe('Hello Claude');
    expect(types[0]).toBe('response.created');
    expect(types).toContain('response.output_text.delta');
    expect(types[types.length - 1]).toBe('response.completed');

    fakes.anthropic.enqueue({
      sse: anthropicStream({
        pieces: ['Checking.'],
        toolUse: { id: 'toolu_04', name: 'get_weather', json: ['{"city":"Rome"}'] },
      }),
    });
    const toolStream = client.responses.stream({
      model: 'anthropic/claude-opus-4-7',
      input: 'Rome?',
      tools: [tool],
    });
    const toolFinal = await toolStream.finalResponse();
    expect(toolFinal.output.map((item) => item.type)).toEqual(['message', 'function_call']);
    expect(toolFinal.output[1]).toMatchObject({ call_id: 'toolu_04', arguments: '{"city":"Rome"}' });
  });

  it('embeds with another provider (Gemini) and encodes base64 as the SDK asks', async () => {
    const answer = await client.embeddings.create({ model: 'gemini/text-embedding-004', input: ['a', 'b'] });
    expect(answer.data.map((item) => item.embedding)).toEqual([
      [0, 0.5, -0.5],
      [1, 0.5, -0.5],
    ]);
    const sent = fakes.gemini.last();
    expect(sent.path).toBe('/v1beta/models/text-embedding-004:batchEmbedContents');
    expect(sent.headers['x-goog-api-key']).toBe(PROVIDER_KEYS.gemini);
  });

  it('raises the SDK’s own exceptions for upstream and gateway errors', async () => {
    const chat = () =>
      client.chat.completions.create({
        model: 'anthropic/claude-opus-4-7',
        messages: [{ role: 'user', content: 'hi' }],
      });
    fakes.anthropic.enqueue(anthropicError(429, 'rate_limit_error', 'slow down'));
    await expect(chat()).rejects.toBeInstanceOf(OpenAI.RateLimitError);
    fakes.anthropic.enqueue(anthropicError(400, 'invalid_request_error', 'messages: bad'));
    const error = await chat().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect((error as Error).message).toContain('messages: bad');
    const stranger = new OpenAI({ apiKey: 'sk-gw-unknown', baseURL: `${gateway.url}/openai`, maxRetries: 0 });
    await expect(stranger.models.list()).rejects.toBeInstanceOf(OpenAI.AuthenticationError);
  });

  it('serves bare OpenAI models on /openai/… without /v1, chat and text completions', async () => {
    const bare = new OpenAI({ apiKey: VIRTUAL_KEY, baseURL: `${gateway.url}/openai`, maxRetries: 0 });
    const completion = await bare.chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(completion.choices[0]!.message.content).toBe('Hello from the fake upstream');
    expect(fakes.openai.last()).toMatchObject({
      path: '/v1/chat/completions',
      headers: { authorization: `Bearer ${PROVIDER_KEYS.openai}` },
    });

    const text = await bare.completions.create({ model: 'gpt-3.5-turbo-instruct', prompt: 'Once' });
    expect(text).toMatchObject({ object: 'text_completion', choices: [{ text: 'Once upon a time' }] });
    expect(fakes.openai.last()).toMatchObject({ path: '/v1/completions', body: { prompt: 'Once' } });
    let streamed = '';
    for await (const chunk of await bare.completions.create({
      model: 'gpt-3.5-turbo-instruct',
      prompt: 'Once',
      stream: true,
    })) {
      streamed += chunk.choices[0]?.text ?? '';
    }
    expect(streamed).toBe('Once upon');
  });
});
