// The guardrail stage on its own, with a fake router: nothing happens without a rule; a stream's output is
// checked per window with the end of the previous window as context; placeholders come back whole across
// chunk boundaries; a blocked answer still carries what it used, for settlement.
import { GuardrailRuntime } from '@gw/guardrails/registry';
import type { CompletionResult, StreamItem } from '@gw/router';
import { createMetrics, GatewayError, guardrailsConfigSchema, silentLogger } from '@gw/shared';
import { describe, expect, it } from 'vitest';
import { BlockedAnswerError } from './blocked-answer-error.ts';
import { createGuardrails } from './guardrail-stage.ts';
import type { CompletionExchange } from './stage.ts';

async function guardrailsOf(config: Record<string, unknown>) {
  const runtime = await GuardrailRuntime.start({
    config: guardrailsConfigSchema.parse(config),
    logger: silentLogger(),
    environment: {},
  });
  return createGuardrails({
    runtime,
    metrics: createMetrics({ service: 'test', defaultMetrics: false }),
    logger: silentLogger(),
  });
}

async function stageOf(config: Record<string, unknown>) {
  return (await guardrailsOf(config)).stage;
}

function exchange(content: string, model = 'gpt-4o'): CompletionExchange {
  const targets = [{ provider: 'openai', model }];
  return {
    requestId: 'r1',
    headers: {},
    signal: new AbortController().signal,
    authorization: { targets },
    route: { requestId: 'r1', operation: 'chat', targets, params: {}, messages: [{ role: 'user', content }] },
  };
}

function answer(content: string): CompletionResult {
  return {
    provider: 'openai',
    json: '{}',
    response: {
      id: 'c1',
      object: 'chat.completion',
      created: 1,
      model: 'gpt-4o',
      choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
      usage: { prompt_tokens: 5, completion_tokens: 7, total_tokens: 12 },
      extra_fields: { provider: 'openai', model_params: {}, latency: 0.1 },
    },
  };
}

async function* chunks(pieces: string[]): AsyncGenerator<StreamItem> {
  for (const piece of pieces) {
    yield {
      chunk: {
        id: 's1',
        object: 'chat.completion.chunk',
        created: 1,
        model: 'gpt-4o',
        choices: [{ index: 0, delta: { content: piece }, finish_reason: null }],
      },
      json: 'precomputed',
    };
  }
}

async function collect(items: AsyncIterable<StreamItem>): Promise<string> {
  let text = '';
  for await (const item of items) text += item.chunk.choices[0]?.delta?.content ?? '';
  return text;
}

const WORDS = { id: 'words', type: 'builtin', keywords: ['classified'] };

describe('guardrail stage', () => {
  it('hands the result through untouched when no rule applies', async () => {
    const stage = await stageOf({
      profiles: [WORDS],
      rules: [{ id: 'r', condition: 'model == "other"', input_profiles: ['words'] }],
    });
    const served = answer('hello');
    const call = exchange('classified');
    expect(await stage.complete!(call, async () => served)).toBe(served);
    expect(call.guardrail).toBeUndefined();
  });

  it('finds a keyword split by a window boundary, and stops the stream there', async () => {
    const stage = await stageOf({
      profiles: [WORDS],
      rules: [{ id: 'out', output_profiles: ['words'], stream_window_chars: 16 }],
    });
    const items = await stage.stream!(exchange('go'), async () =>
      chunks(['The answer ', 'is now classi', 'fied for you.']),
    );
    const relayed: string[] = [];
    await expect(
      (async () => {
        for await (const item of items) relayed.push(item.chunk.choices[0]?.delta?.content ?? '');
      })(),
    ).rejects.toMatchObject({ type: 'guardrail_blocked' });
    expect(relayed.join('')).toBe('The answer is now classi');
  });

  it('puts placeholders back even when the model splits one across chunks', async () => {
    const stage = await stageOf({
      profiles: [{ id: 'pii', type: 'builtin', pii: ['email'] }],
      rules: [{ id: 'pii', action: 'REDACT', reversible: true, input_profiles: ['pii'] }],
    });
    const call = exchange('mail ann@example.com');
    const items = await stage.stream!(call, async () => {
      expect(call.route.operation === 'chat' && call.route.messages[0]?.content).toBe('mail [EMAIL_1]');
      return chunks(['Sent to [EMA', 'IL_1', '] just now.']);
    });
    expect(await collect(items)).toBe('Sent to ann@example.com just now.');
    expect(call.guardrail).toMatchObject({ outcome: 'warning', reversible: true });
  });

  it('blocks a generated answer with what it used, so it is still charged', async () => {
    const stage = await stageOf({ profiles: [WORDS], rules: [{ id: 'out', output_profiles: ['words'] }] });
    const error = await stage.complete!(exchange('go'), async () => answer('it is classified')).catch(
      (thrown: unknown) => thrown,
    );
    expect(error).toBeInstanceOf(BlockedAnswerError);
    expect(error).toBeInstanceOf(GatewayError);
    expect((error as BlockedAnswerError).served).toEqual({
      provider: 'openai',
      model: 'gpt-4o',
      usage: { prompt_tokens: 5, completion_tokens: 7, total_tokens: 12 },
    });
  });

  describe('every text the provider receives (issue 25)', () => {
    const BLOCK = { profiles: [WORDS], rules: [{ id: 'in', input_profiles: ['words'] }] };
    const withRoute = (route: Partial<CompletionExchange['route']>): CompletionExchange => {
      const base = exchange('hello');
      return { ...base, route: { ...base.route, ...route } as CompletionExchange['route'] };
    };
    const hidden: Array<[string, Partial<CompletionExchange['route']>, string]> = [
      [
        'a tool description',
        {
          params: {
            tools: [{ type: 'function', function: { name: 'f', description: 'the CLASSIFIED plan' } }],
          },
        },
        'tools[0].function.description',
      ],
      [
        'a tool name',
        { params: { tools: [{ type: 'function', function: { name: 'classified' } }] } },
        'tools[0].function.name',
      ],
      [
        'a parameter schema’s description',
        {
          params: {
            tools: [
              {
                type: 'function',
                function: {
                  name: 'f',
                  parameters: {
                    type: 'object',
                    properties: { id: { type: 'string', description: 'classified' } },
                  },
                },
              },
            ],
          },
        },
        'tools[0].function.parameters.properties.id.description',
      ],
      [
        'a parameter schema’s property name',
        {
          params: {
            tools: [
              { type: 'function', function: { name: 'f', parameters: { properties: { classified: {} } } } },
            ],
          },
        },
        'tools[0].function.parameters.properties{classified}',
      ],
      [
        'a response_format schema',
        {
          params: {
            response_format: {
              type: 'json_schema',
              json_schema: { name: 'a', schema: { type: 'object', description: 'all classified' } },
            },
          },
        },
        'response_format.json_schema.schema.description',
      ],
      [
        'a prediction',
        { params: { prediction: { type: 'content', content: 'the classified text' } } },
        'prediction.content',
      ],
      [
        'an assistant tool call’s arguments in the history',
        {
          messages: [
            { role: 'user', content: 'hi' },
            {
              role: 'assistant',
              content: null,
              tool_calls: [
                { id: 'c1', type: 'function', function: { name: 'f', arguments: '{"q":"classified"}' } },
              ],
            },
            { role: 'tool', tool_call_id: 'c1', content: 'ok' },
          ],
        },
        'messages[1].tool_calls[0].function.arguments',
      ],
      ['a stop sequence', { params: { stop: ['classified'] } }, 'stop[0]'],
      [
        'a text completion’s prompt and suffix',
        { operation: 'text', prompt: 'go', params: { suffix: 'classified' } } as never,
        'suffix',
      ],
      [
        'a field only the caller’s own format carries',
        {
          native: {
            format: 'anthropic',
            headers: {},
            body: { system: [{ type: 'text', text: 'classified' }] },
          },
        },
        'native.system[0].text',
      ],
    ];
    it.each(hidden)(
      'blocks a keyword in %s, before the provider is called',
      async (_what, route, location) => {
        const stage = await stageOf(BLOCK);
        let called = false;
        const error = await stage.complete!(withRoute(route), async () => {
          called = true;
          return answer('fine');
        }).catch((thrown: unknown) => thrown);
        expect(error).toMatchObject({ type: 'guardrail_blocked', status: 446 });
        expect((error as GatewayError).extra).toMatchObject({
          guardrails: { violations: [{ location, category: 'keyword' }] },
        });
        expect(called).toBe(false);
      },
    );

    it('leaves ids, roles, media and the caller’s user id alone, and lets a clean request through', async () => {
      const stage = await stageOf({
        profiles: [{ id: 'pii', type: 'builtin', pii: ['email', 'phone'] }],
        rules: [{ id: 'pii', input_profiles: ['pii'] }],
      });
      const call = withRoute({
        params: { user: 'ann@example.com', metadata: { owner: 'bob@example.com' } },
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'describe' },
              { type: 'image_url', image_url: { url: 'data:image/png;base64,MTIzNDU2Nzg5MDEyMzQ1' } },
            ],
          },
          {
            role: 'assistant',
            content: null,
            tool_calls: [
              { id: 'call_123456789012', type: 'function', function: { name: 'f', arguments: '{}' } },
            ],
          },
          { role: 'tool', tool_call_id: 'call_123456789012', content: 'done' },
        ],
      });
      const served = answer('fine');
      expect((await stage.complete!(call, async () => served)).response.choices).toEqual(
        served.response.choices,
      );
    });

    it('redacts inside tool definitions and arguments, and the provider gets the translation', async () => {
      const stage = await stageOf({
        profiles: [{ id: 'pii', type: 'builtin', pii: ['email'] }],
        rules: [{ id: 'pii', action: 'REDACT', input_profiles: ['pii'] }],
      });
      const call = withRoute({
        params: {
          tools: [
            {
              type: 'function',
              function: {
                name: 'mail',
                parameters: { properties: { 'ann@example.com': { type: 'string' } } },
              },
            },
          ],
        },
        messages: [
          { role: 'user', content: 'hi' },
          {
            role: 'assistant',
            content: null,
            tool_calls: [
              { id: 'c1', type: 'function', function: { name: 'f', arguments: '{"to":"bob@example.com"}' } },
            ],
          },
        ],
        native: { format: 'anthropic', headers: {}, body: {} },
      });
      await stage.complete!(call, async () => {
        const route = call.route as Extract<CompletionExchange['route'], { operation: 'chat' }>;
        expect(route.native).toBeUndefined();
        expect(JSON.stringify(route.params['tools'])).toContain('"[REDACTED_EMAIL]":{"type":"string"}');
        expect(route.messages[1]).toMatchObject({
          tool_calls: [{ function: { arguments: '{"to":"[REDACTED_EMAIL]"}' } }],
        });
        return answer('fine');
      });
    });

    it('checks embeddings inputs, and redacts them', async () => {
      const guardrails = await stageOf({
        profiles: [WORDS, { id: 'pii', type: 'builtin', pii: ['email'] }],
        rules: [
          { id: 'in', condition: 'request_type == "text"', input_profiles: ['words'] },
          { id: 'pii', action: 'REDACT', input_profiles: ['pii'] },
        ],
      });
      const base = exchange('x');
      const embeddings = (input: string | string[]) => ({
        ...base,
        route: {
          requestId: 'r1',
          operation: 'embeddings' as const,
          targets: base.route.targets,
          params: {},
          input,
        },
      });
      const result = { provider: 'openai', response: {} } as never;
      await expect(
        guardrails.embed!(embeddings(['fine', 'the classified list']), async () => result),
      ).rejects.toMatchObject({ type: 'guardrail_blocked' });
      const mailed = embeddings('write ann@example.com');
      await guardrails.embed!(mailed, async () => {
        expect(mailed.route.input).toBe('write [REDACTED_EMAIL]');
        return result;
      });
    });

    it('checks a pass-through JSON body, rewrites it, and refuses a body it cannot read', async () => {
      const { passthroughInput } = await guardrailsOf({
        profiles: [WORDS, { id: 'pii', type: 'builtin', pii: ['email'] }],
        rules: [
          { id: 'in', input_profiles: ['words'] },
          { id: 'pii', action: 'REDACT', input_profiles: ['pii'] },
        ],
      });
      const call = (content: Parameters<typeof passthroughInput>[0]['content'], operation = 'responses') =>
        passthroughInput({
          requestId: 'r1',
          headers: {},
          authorization: { targets: [] },
          signal: new AbortController().signal,
          operation,
          target: { provider: 'openai', model: 'gpt-4o' },
          content,
        });
      await expect(
        call({
          json: {
            model: 'gpt-4o',
            input: [{ role: 'user', content: [{ type: 'input_text', text: 'Classified' }] }],
          },
        }),
      ).rejects.toMatchObject({ type: 'guardrail_blocked', code: 'in' });
      expect(
        await call({ json: { model: 'gpt-4o', prompt: 'mail ann@example.com' } }, 'completions'),
      ).toEqual({
        model: 'gpt-4o',
        prompt: 'mail [REDACTED_EMAIL]',
      });
      expect(await call({ json: { model: 'gpt-4o', input: 'fine' } }, 'embeddings')).toBeUndefined();
      await expect(call('opaque', 'files')).rejects.toMatchObject({
        type: 'guardrail_blocked',
        code: 'in',
        message: expect.stringContaining('relayed unread'),
      });
      expect(await call(undefined, 'models')).toBeUndefined();
    });
  });
});
