// The `/genai` surface with the official @google/genai SDK as the client (API versions v1 and v1beta), in
// both modes: generateContent whole and streamed, function calls both ways, embeddings and token counts,
// answered by OpenAI (a fake OpenAI upstream); upstream errors raise the SDK's ApiError with the status.
import { ApiError, GoogleGenAI, Type } from '@google/genai';
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

const WEATHER = {
  functionDeclarations: [
    {
      name: 'get_weather',
      description: 'Current weather of a city',
      parameters: { type: Type.OBJECT, properties: { city: { type: Type.STRING } }, required: ['city'] },
    },
  ],
};

const toolStream = () =>
  toolCallStreamEvents({
    id: 'chatcmpl-g',
    callId: 'call_g2',
    name: 'get_weather',
    fragments: ['{"ci', 'ty":"Oslo"}'],
  });

describe.each(MODES)('@google/genai → /genai → OpenAI (%s)', (_mode, start) => {
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

  describe.each(['v1', 'v1beta'])('API version %s', (apiVersion) => {
    const client = () =>
      new GoogleGenAI({ apiKey: VIRTUAL_KEY, httpOptions: { baseUrl: `${gateway.url}/genai`, apiVersion } });

    it('generates content with system instruction and generation config', async () => {
      const response = await client().models.generateContent({
        model: 'openai/gpt-4o-mini',
        contents: 'Hi',
        config: { systemInstruction: 'Be brief.', temperature: 0.2, maxOutputTokens: 50 },
      });
      expect(response.text).toBe('Hello from the fake upstream');
      expect(response.usageMetadata).toMatchObject({
        promptTokenCount: 11,
        candidatesTokenCount: 7,
        totalTokenCount: 18,
      });
      expect(response.candidates?.[0]?.finishReason).toBe('STOP');
      const sent = fakes.openai.last();
      expect(sent.headers.authorization).toBe(`Bearer ${PROVIDER_KEYS.openai}`);
      expect(JSON.stringify(sent.headers)).not.toContain(VIRTUAL_KEY);
      expect(sent.body).toMatchObject({
        model: 'gpt-4o-mini',
        temperature: 0.2,
        max_tokens: 50,
        messages: [
          { role: 'system', content: 'Be brief.' },
          { role: 'user', content: 'Hi' },
        ],
      });
    });

    it('calls functions and sends their responses back', async () => {
      fakes.openai.enqueue({
        json: chatCompletion({
          content: null,
          toolCalls: [
            {
              id: 'call_g1',
              type: 'function',
              function: { name: 'get_weather', arguments: '{"city":"Paris"}' },
            },
          ],
        }),
      });
      const first = await client().models.generateContent({
        model: 'openai/gpt-4o-mini',
        contents: 'Weather in Paris?',
        config: { tools: [WEATHER] },
      });
      expect(first.functionCalls).toEqual([{ id: 'call_g1', name: 'get_weather', args: { city: 'Paris' } }]);
      expect(fakes.openai.last().body).toMatchObject({
        tools: [
          {
            type: 'function',
            function: {
              name: 'get_weather',
              parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
            },
          },
        ],
      });

      await client().models.generateContent({
        model: 'openai/gpt-4o-mini',
        contents: [
          { role: 'user', parts: [{ text: 'Weather in Paris?' }] },
          { role: 'model', parts: [{ functionCall: { name: 'get_weather', args: { city: 'Paris' } } }] },
          { role: 'user', parts: [{ functionResponse: { name: 'get_weather', response: { celsius: 21 } } }] },
        ],
        config: { tools: [WEATHER] },
      });
      const messages = (fakes.openai.last().body as { messages: Array<Record<string, unknown>> }).messages;
      const callId = (messages[1]!['tool_calls'] as Array<{ id: string }>)[0]!.id;
      expect(messages[1]).toMatchObject({
        role: 'assistant',
        tool_calls: [{ type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }],
      });
      expect(messages[2]).toEqual({ role: 'tool', tool_call_id: callId, content: '{"celsius":21}' });
    });

    it('streams text and function calls', async () => {
      let text = '';
      for await (const chunk of await client().models.generateContentStream({
        model: 'openai/gpt-4o-mini',
        contents: 'Say hello',
      })) {
        text += chunk.text ?? '';
      }
      expect(text).toBe('Hello wörld');
      expect(fakes.openai.last().body).toMatchObject({ stream: true });

      fakes.openai.enqueue({ events: toolStream() });
      const calls: unknown[] = [];
      for await (const chunk of await client().models.generateContentStream({
        model: 'openai/gpt-4o-mini',
        contents: 'Weather in Oslo?',
        config: { tools: [WEATHER] },
      })) {
        calls.push(...(chunk.functionCalls ?? []));
      }
      expect(calls).toEqual([{ id: 'call_g2', name: 'get_weather', args: { city: 'Oslo' } }]);
    });

    it('embeds and counts tokens', async () => {
      fakes.openai.enqueue({
        json: {
          object: 'list',
          data: [
            { object: 'embedding', index: 0, embedding: [0.25, 0.5] },
            { object: 'embedding', index: 1, embedding: [0.75, 1] },
          ],
          model: 'text-embedding-3-small',
          usage: { prompt_tokens: 2, total_tokens: 2 },
        },
      });
      const embedded = await client().models.embedContent({
        model: 'openai/text-embedding-3-small',
        contents: ['a', 'b'],
        config: { outputDimensionality: 2 },
      });
      expect(embedded.embeddings?.map((embedding) => embedding.values)).toEqual([
        [0.25, 0.5],
        [0.75, 1],
      ]);
      expect(fakes.openai.last()).toMatchObject({
        path: '/v1/embeddings',
        body: { model: 'text-embedding-3-small', input: ['a', 'b'], dimensions: 2 },
      });
      const counted = await client().models.countTokens({
        model: 'openai/gpt-4o-mini',
        contents: 'Hello there',
      });
      expect(counted.totalTokens).toBeGreaterThan(0);
    });

    it('raises ApiError with the upstream status', async () => {
      fakes.openai.enqueue({
        status: 429,
        json: { error: { message: 'Rate limit reached', type: 'requests' } },
      });
      const limited = await client()
        .models.generateContent({ model: 'openai/gpt-4o-mini', contents: 'hi' })
        .catch((error: unknown) => error);
      expect(limited).toBeInstanceOf(ApiError);
      expect((limited as ApiError).status).toBe(429);
      expect((limited as ApiError).message).toContain('RESOURCE_EXHAUSTED');
      const stranger = new GoogleGenAI({
        apiKey: 'sk-gw-unknown',
        httpOptions: { baseUrl: `${gateway.url}/genai`, apiVersion },
      });
      const denied = await stranger.models
        .generateContent({ model: 'openai/gpt-4o-mini', contents: 'hi' })
        .catch((error: unknown) => error);
      expect((denied as ApiError).status).toBe(401);
    });
  });

  it('accepts a URL-encoded provider/model, the key as ?key=, and serves gemini-… with Gemini', async () => {
    const response = await fetch(
      `${gateway.url}/genai/v1beta/models/openai%2Fgpt-4o-mini:generateContent?key=${VIRTUAL_KEY}`,
      {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ contents: [{ role: 'user', parts: [{ text: 'Hi' }] }] }),
      },
    );
    expect(response.status).toBe(200);
    expect(((await response.json()) as { candidates: unknown[] }).candidates).toHaveLength(1);

    const client = new GoogleGenAI({ apiKey: VIRTUAL_KEY, httpOptions: { baseUrl: `${gateway.url}/genai` } });
    const gemini = await client.models.generateContent({ model: 'gemini-2.5-flash', contents: 'Hi' });
    expect(gemini.text).toBe('Hello from Gemini');
    expect(fakes.gemini.last()).toMatchObject({
      path: '/v1beta/models/gemini-2.5-flash:generateContent',
      headers: { 'x-goog-api-key': PROVIDER_KEYS.gemini },
    });
  });
});
