// LangChain (`ChatOpenAI`, `ChatAnthropic`) and the OpenAI Agents SDK against gw (issue 10), embedded,
// answered by fake upstreams that record what they got: invoke, stream, bound tools, structured output, and
// an agent's tool run, whole and streamed, each served by the client's own provider or another.

import { anthropicMessage, type LaunchedGateway, startEmbedded } from '@gw/testkit';
import { ChatAnthropic } from '@langchain/anthropic';
import { HumanMessage, SystemMessage } from '@langchain/core/messages';
import { ChatOpenAI } from '@langchain/openai';
import { Agent, run, setDefaultOpenAIClient, setTracingDisabled, tool } from '@openai/agents';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  closeFakes,
  type SurfaceFakes,
  startFakes,
  surfaceConfig,
  VIRTUAL_KEY,
} from '../surfaces/surface-gateway.ts';

interface Sent {
  model?: string;
  messages?: Array<{ role: string; content: unknown }>;
  tools?: Array<{ name?: string; function?: { name: string } }>;
  output_config?: unknown;
  system?: unknown;
}

const WEATHER = z.object({ city: z.string().describe('A city') });

describe('LangChain and the OpenAI Agents SDK → gw (embedded)', () => {
  let fakes: SurfaceFakes;
  let gateway: LaunchedGateway;

  beforeAll(async () => {
    fakes = await startFakes();
    gateway = await startEmbedded({ config: surfaceConfig(fakes) });
    setTracingDisabled(true);
  });
  afterAll(async () => {
    await gateway?.close();
    await closeFakes(fakes);
  });

  const chatOpenAi = (model: string) =>
    new ChatOpenAI({
      model,
      apiKey: VIRTUAL_KEY,
      configuration: { baseURL: `${gateway.url}/openai/v1` },
      maxRetries: 0,
    });
  const chatAnthropic = (model: string) =>
    new ChatAnthropic({
      model,
      apiKey: VIRTUAL_KEY,
      anthropicApiUrl: `${gateway.url}/anthropic`,
      maxRetries: 0,
    });

  it('ChatAnthropic: invoke with system turns and stream, served by Anthropic as it came', async () => {
    const answer = await chatAnthropic('claude-sonnet-4-5').invoke([
      new SystemMessage('Be brief.'),
      new HumanMessage('Say hello'),
    ]);
    expect(answer.content).toBe('Hello from Claude');
    expect((fakes.anthropic.last().body as Sent).system).toBeDefined();

    let streamed = '';
    for await (const chunk of await chatAnthropic('claude-sonnet-4-5').stream('Say hello')) {
      streamed += typeof chunk.content === 'string' ? chunk.content : '';
    }
    expect(streamed).toBe('Hello Claude');
  });

  it('ChatAnthropic: structured output by a forced tool, served by Anthropic as it came', async () => {
    fakes.anthropic.enqueue({
      json: anthropicMessage({ toolUse: { id: 'toolu_lc_1', name: 'place', input: { city: 'Paris' } } }),
    });
    const structured = await chatAnthropic('claude-sonnet-4-5')
      .withStructuredOutput(WEATHER, { name: 'place' })
      .invoke('Where is the Louvre?');
    expect(structured).toEqual({ city: 'Paris' });
    const sent = fakes.anthropic.last().body as Sent & { tool_choice?: unknown };
    expect(sent.tools?.[0]?.name).toBe('place');
    expect(sent.tool_choice).toMatchObject({ type: 'tool', name: 'place' });
  });

  it('ChatAnthropic: bound tools, served by OpenAI', async () => {
    const bound = chatAnthropic('openai/gpt-4o').bindTools([
      { name: 'weather', description: 'Weather of a city', schema: WEATHER },
    ]);
    await bound.invoke('Weather in Paris?');
    expect((fakes.openai.last().body as Sent).tools?.[0]?.function?.name).toBe('weather');
  });

  it('ChatOpenAI: invoke, stream and withStructuredOutput, served by Anthropic', async () => {
    const answer = await chatOpenAi('anthropic/claude-opus-4-7').invoke('Say hello');
    expect(answer.content).toBe('Hello from Claude');

    let streamed = '';
    for await (const chunk of await chatOpenAi('anthropic/claude-opus-4-7').stream('Say hello')) {
      streamed += typeof chunk.content === 'string' ? chunk.content : '';
    }
    expect(streamed).toBe('Hello Claude');

    fakes.anthropic.enqueue({ json: anthropicMessage({ text: '{"city":"Paris"}' }) });
    const structured = await chatOpenAi('anthropic/claude-opus-4-7')
      .withStructuredOutput(WEATHER, { method: 'jsonSchema', name: 'place' })
      .invoke('Where is the Louvre?');
    expect(structured).toEqual({ city: 'Paris' });
    expect((fakes.anthropic.last().body as Sent).output_config).toMatchObject({
      format: { type: 'json_schema' },
    });
  });

  it('the Agents SDK runs a tool, whole and streamed, served by Anthropic through the Responses API', async () => {
    setDefaultOpenAIClient(
      new OpenAI({ apiKey: VIRTUAL_KEY, baseURL: `${gateway.url}/openai/v1`, maxRetries: 0 }),
    );
    const calls: string[] = [];
    const agent = new Agent({
      name: 'weather',
      instructions: 'Answer with the weather.',
      model: 'anthropic/claude-opus-4-7',
      tools: [
        tool({
          name: 'weather',
          description: 'Weather of a city',
          parameters: WEATHER,
          execute: async ({ city }) => {
            calls.push(city);
            return `sunny in ${city}`;
          },
        }),
      ],
    });
    fakes.anthropic.enqueue(
      {
        json: anthropicMessage({ toolUse: { id: 'toolu_ag_1', name: 'weather', input: { city: 'Paris' } } }),
      },
      { json: anthropicMessage({ text: 'It is sunny in Paris.' }) },
    );
    const result = await run(agent, 'Weather in Paris?');
    expect(result.finalOutput).toBe('It is sunny in Paris.');
    expect(calls).toEqual(['Paris']);
    expect(JSON.stringify((fakes.anthropic.last().body as Sent).messages)).toContain('sunny in Paris');

    const streamed = await run(agent, 'Say hello', { stream: true });
    let text = '';
    for await (const piece of streamed.toTextStream()) text += piece;
    await streamed.completed;
    expect(text).toBe('Hello Claude');
  });
});
