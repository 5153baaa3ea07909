// The `/litellm` surface (proxy-library style: OpenAI shapes, provider from the model's prefix) with the
// `openai` SDK as the client, in both modes, served by fake Anthropic and Gemini upstreams.
import { anthropicMessage, type LaunchedGateway } from '@gw/testkit';
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

describe.each(MODES)('OpenAI SDK → /litellm (%s)', (_mode, start) => {
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

  it('routes by the model prefix: anthropic/… to Anthropic, gemini/… to Gemini, streamed', async () => {
    const client = new OpenAI({ apiKey: VIRTUAL_KEY, baseURL: `${gateway.url}/litellm`, maxRetries: 0 });
    fakes.anthropic.enqueue({
      json: anthropicMessage({ toolUse: { id: 'toolu_l1', name: 'lookup', input: { q: 'gw' } } }),
    });
    const completion = await client.chat.completions.create({
      model: 'anthropic/claude-opus-4-7',
      messages: [{ role: 'user', content: 'Look up gw' }],
      tools: [
        { type: 'function', function: { name: 'lookup', parameters: { type: 'object', properties: {} } } },
      ],
    });
    expect(completion.choices[0]!.message.tool_calls![0]).toMatchObject({
      id: 'toolu_l1',
      function: { name: 'lookup', arguments: '{"q":"gw"}' },
    });
    expect(fakes.anthropic.last().headers['x-api-key']).toBe(PROVIDER_KEYS.anthropic);

    const stream = await client.chat.completions.create({
      model: 'gemini/gemini-2.5-flash',
      messages: [{ role: 'user', content: 'Hi' }],
      stream: true,
    });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
    expect(text).toBe('Hello Gemini');
    expect(fakes.gemini.last().path).toBe('/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse');
  });

  it('serves /litellm/v1/… as well, and answers unknown paths 404', async () => {
    const client = new OpenAI({ apiKey: VIRTUAL_KEY, baseURL: `${gateway.url}/litellm/v1`, maxRetries: 0 });
    const completion = await client.chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'Hi' }],
    });
    expect(completion.choices[0]!.message.content).toBe('Hello from the fake upstream');
    await expect(client.models.list()).rejects.toBeInstanceOf(OpenAI.NotFoundError);
  });
});
