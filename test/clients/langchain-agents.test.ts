// LangChain (`ChatOpenAI`, `ChatAnthropic`) and the OpenAI Agents SDK against gw (issue 10), in both modes
// (issue 27), answered by fake upstreams that record what they got: invoke, stream, bound tools, structured
// output, and an agent's tool run, whole and streamed, served by Anthropic and by Gemini.

import { anthropicMessage, chatStreamEvents, type LaunchedGateway } from '@gw/testkit';
import { ChatAnthropic } from '@langchain/anthropic';
import { type AIMessageChunk, HumanMessage, SystemMessage } from '@langchain/core/messages';
import { ChatOpenAI } from '@langchain/openai';
import { Agent, OpenAIProvider, Runner, setTracingDisabled, tool } from '@openai/agents';
import OpenAI from 'openai';
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
  tools?: Array<{ name?: string; function?: { name: string } }>;
  output_config?: unknown;
  system?: unknown;
}

/** A Gemini GenerateContentResponse of one text or one function call. */
function geminiAnswer(part: { text: string } | { functionCall: { name: string; args: unknown } }) {
  return {
    candidates: [{ content: { role: 'model', parts: [part] }, finishReason: 'STOP', index: 0 }],
    usageMetadata: { promptTokenCount: 9, candidatesTokenCount: 4, totalTokenCount: 13 },
    modelVersion: 'gemini-2.5-flash',
  };
}

const WEATHER = z.object({ city: z.string().describe('A city') });

describe.each(MODES)('LangChain and the OpenAI Agents SDK → gw (%s)', (_mode, start) => {
  let fakes: SurfaceFakes;
  let gateway: LaunchedGateway;

  beforeAll(async () => {
    fakes = await startFakes();
    gateway = await start(surfaceConfig(fakes));
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

  it("ChatAnthropic: a stream served by OpenAI sums the prompt's tokens (gw's estimate, the provider's comes last)", async () => {
    // OpenAI's count of these two turns; it reports it only after the answer.
    const promptTokens = 16;
    fakes.openai.enqueue({
      events: chatStreamEvents({
        model: 'gpt-4o',
        usage: { prompt_tokens: promptTokens, completion_tokens: 3, total_tokens: promptTokens + 3 },
      }),
    });
    let summed: AIMessageChunk | undefined;
    for await (const chunk of await chatAnthropic('openai/gpt-4o').stream([
      new SystemMessage('Be brief.'),
      new HumanMessage('Say hello'),
    ])) {
      summed = summed ? summed.concat(chunk) : chunk;
    }
    expect(summed?.content).toBe('Hello wörld');
    const usage = summed?.usage_metadata;
    expect(usage?.output_tokens).toBe(3);
    // ChatAnthropic reads input tokens from message_start alone, where gw puts its estimate of the prompt.
    expect(usage?.input_tokens).toBeGreaterThan(0);
    expect(Math.abs((usage?.input_tokens ?? 0) - promptTokens)).toBeLessThanOrEqual(promptTokens / 4);
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

  /** How each provider answers the agent: first a call of the weather tool, then the text after it. */
  const AGENT_ANSWERS = {
    'anthropic/claude-opus-4-7': {
      upstream: () => fakes.anthropic,
      toolCall: {
        json: anthropicMessage({ toolUse: { id: 'toolu_ag_1', name: 'weather', input: { city: 'Paris' } } }),
      },
      text: { json: anthropicMessage({ text: 'It is sunny in Paris.' }) },
      streamed: 'Hello Claude',
      sentText: (body: unknown) => JSON.stringify((body as Sent).messages),
    },
    'gemini/gemini-2.5-flash': {
      upstream: () => fakes.gemini,
      toolCall: { json: geminiAnswer({ functionCall: { name: 'weather', args: { city: 'Paris' } } }) },
      text: { json: geminiAnswer({ text: 'It is sunny in Paris.' }) },
      streamed: 'Hello Gemini',
      sentText: (body: unknown) => JSON.stringify((body as { contents?: unknown }).contents),
    },
  };

  it.each(Object.keys(AGENT_ANSWERS) as Array<keyof typeof AGENT_ANSWERS>)(
    'the Agents SDK runs a tool, whole and streamed, served by %s through the Responses API',
    async (model) => {
      const answers = AGENT_ANSWERS[model];
      // A runner of its own: the default provider keeps the first client it made (the other mode's gateway).
      const runner = new Runner({
        modelProvider: new OpenAIProvider({
          openAIClient: new OpenAI({
            apiKey: VIRTUAL_KEY,
            baseURL: `${gateway.url}/openai/v1`,
            maxRetries: 0,
          }),
        }),
      });
      const calls: string[] = [];
      const agent = new Agent({
        name: 'weather',
        instructions: 'Answer with the weather.',
        model,
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
      answers.upstream().enqueue(answers.toolCall, answers.text);
      const result = await runner.run(agent, 'Weather in Paris?');
      expect(result.finalOutput).toBe('It is sunny in Paris.');
      expect(calls).toEqual(['Paris']);
      expect(answers.sentText(answers.upstream().last().body)).toContain('sunny in Paris');

      const streamed = await runner.run(agent, 'Say hello', { stream: true });
      let text = '';
      for await (const piece of streamed.toTextStream()) text += piece;
      await streamed.completed;
      expect(text).toBe(answers.streamed);
    },
  );
});
