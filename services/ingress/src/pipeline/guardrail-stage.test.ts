// The guardrail stage on its own, with a fake router: nothing happens without a rule; a stream's output is
// checked per window with the end of the previous window as context; placeholders come back whole across
// chunk boundaries; a blocked answer still carries what it used, for settlement.
import { GuardrailRuntime } from '@gw/guardrails/registry';
import type { CompletionResult, StreamItem } from '@gw/router';
import { createMetrics, GatewayError, guardrailsConfigSchema, silentLogger } from '@gw/shared';
import { describe, expect, it } from 'vitest';
import { BlockedAnswerError, createGuardrails } from './guardrail-stage.ts';
import type { CompletionExchange } from './stage.ts';

async function stageOf(config: Record<string, unknown>) {
  const runtime = await GuardrailRuntime.start({
    config: guardrailsConfigSchema.parse(config),
    logger: silentLogger(),
    environment: {},
  });
  return createGuardrails({
    runtime,
    metrics: createMetrics({ service: 'test', defaultMetrics: false }),
    logger: silentLogger(),
  }).stage;
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
});
