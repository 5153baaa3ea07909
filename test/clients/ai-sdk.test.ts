// The Vercel AI SDK against gw (issue 10), in both modes (issue 27), answered by fake upstreams that record what they got:
// `@ai-sdk/openai` (whose default model calls the Responses API), `@ai-sdk/anthropic` and `@ai-sdk/google`,
// each served by its own provider and by another: text, streams, multi-step tools, objects, embeddings.
import { createAnthropic } from '@ai-sdk/anthropic';
import { createGoogleGenerativeAI } from '@ai-sdk/google';
import { createOpenAI } from '@ai-sdk/openai';
import { anthropicMessage, anthropicStream, type LaunchedGateway } from '@gw/testkit';
import { embedMany, generateObject, generateText, stepCountIs, streamObject, streamText, tool } from 'ai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  closeFakes,
  MODES,
  type SurfaceFakes,
  startFakes,
  surfaceConfig,
  VIRTUAL_KEY,
} from '../surfaces/surface-gateway.ts';

interface Sent {
  model?: string;
  messages?: Array<{ role: string; content: unknown }>;
  output_config?: unknown;
}

describe.each(MODES)('Vercel AI SDK → gw (%s)', (_mode, start) => {
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

  const openai = () => createOpenAI({ baseURL: `${gateway.url}/openai/v1`, apiKey: VIRTUAL_KEY });
  const anthropic = () => createAnthropic({ baseURL: `${gateway.url}/anthropic/v1`, apiKey: VIRTUAL_KEY });
  const google = () =>
    createGoogleGenerativeAI({ baseURL: `${gateway.url}/genai/v1beta`, apiKey: VIRTUAL_KEY });

  it('@ai-sdk/openai’s default model (the Responses API): served by OpenAI as it came, and by Anthropic', async () => {
    const own = await generateText({ model: openai()('gpt-4o'), prompt: 'Say hello' });
    expect(own.text).toBe('Hello from the fake Responses API');
    expect(fakes.openai.last().path).toBe('/v1/responses');

    const other = await generateText({ model: openai()('anthropic/claude-opus-4-7'), prompt: 'Say hello' });
    expect(other.text).toBe('Hello from Claude');
    expect(other.usage.inputTokens).toBeGreaterThan(0);
  });

  it('@ai-sdk/anthropic streams, and runs a multi-step tool loop, served by Anthropic as it came', async () => {
    const stream = streamText({ model: anthropic()('claude-sonnet-4-5'), prompt: 'Say hello' });
    expect(await stream.text).toBe('Hello Claude');

    fakes.anthropic.enqueue(
      {
        json: anthropicMessage({ toolUse: { id: 'toolu_ai_1', name: 'weather', input: { city: 'Paris' } } }),
      },
      { json: anthropicMessage({ text: 'It is sunny in Paris.' }) },
    );
    const result = await generateText({
      model: anthropic()('claude-sonnet-4-5'),
      prompt: 'Weather in Paris?',
      tools: {
        weather: tool({
          description: 'Current weather of a city',
          inputSchema: z.object({ city: z.string() }),
          execute: async ({ city }) => ({ city, sky: 'sunny' }),
        }),
      },
      stopWhen: stepCountIs(3),
    });
    expect(result.text).toBe('It is sunny in Paris.');
    expect(result.steps).toHaveLength(2);
    const followUp = fakes.anthropic.last().body as Sent;
    expect(JSON.stringify(followUp.messages)).toContain('"tool_use_id":"toolu_ai_1"');
    expect(JSON.stringify(followUp.messages)).toContain('sunny');
  });

  it('@ai-sdk/anthropic streams served by OpenAI, learning the real input tokens from message_delta', async () => {
    const stream = streamText({ model: anthropic()('openai/gpt-4o-mini'), prompt: 'Say hello' });
    expect(await stream.text).toBe('Hello wörld');
    expect(await stream.usage).toMatchObject({ inputTokens: 9, outputTokens: 3 });
  });

  it('generateObject through the OpenAI provider, served by Anthropic’s structured output', async () => {
    fakes.anthropic.enqueue({ json: anthropicMessage({ text: '{"city":"Paris","country":"France"}' }) });
    const { object } = await generateObject({
      model: openai()('anthropic/claude-opus-4-7'),
      schema: z.object({ city: z.string(), country: z.string() }),
      prompt: 'Where is the Louvre?',
    });
    expect(object).toEqual({ city: 'Paris', country: 'France' });
    expect((fakes.anthropic.last().body as Sent).output_config).toMatchObject({
      format: { type: 'json_schema', schema: { type: 'object' } },
    });
  });

  it('streamObject through the Anthropic provider, served by Anthropic as it came', async () => {
    fakes.anthropic.enqueue({
      sse: anthropicStream({
        model: 'claude-sonnet-4-5',
        pieces: ['{"city":', '"Paris",', '"country":"France"}'],
      }),
    });
    const result = streamObject({
      model: anthropic()('claude-sonnet-4-5'),
      schema: z.object({ city: z.string(), country: z.string() }),
      prompt: 'Where is the Louvre?',
    });
    const partials: unknown[] = [];
    for await (const partial of result.partialObjectStream) partials.push(partial);
    expect(await result.object).toEqual({ city: 'Paris', country: 'France' });
    expect(partials.length).toBeGreaterThan(0);
  });

  it('@ai-sdk/google streams, served by Gemini as it came (each event once, in a cluster too)', async () => {
    const stream = streamText({ model: google()('gemini-2.5-flash'), prompt: 'Say hello' });
    expect(await stream.text).toBe('Hello Gemini');
    expect(fakes.gemini.last().path).toBe('/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse');
  });

  it('@ai-sdk/google with a model id holding a slash, served by OpenAI', async () => {
    const result = await generateText({ model: google()('openai/gpt-4o-mini'), prompt: 'Say hello' });
    expect(result.text.length).toBeGreaterThan(0);
    expect((fakes.openai.last().body as Sent).model).toBe('gpt-4o-mini');
  });

  it('embedMany through the OpenAI provider, served by Gemini', async () => {
    const { embeddings } = await embedMany({
      model: openai().embedding('gemini/text-embedding-004'),
      values: ['a', 'b'],
    });
    expect(embeddings).toHaveLength(2);
    expect(fakes.gemini.last().path).toContain('text-embedding-004:batchEmbedContents');
  });
});
