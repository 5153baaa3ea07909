import { describe, expect, it } from 'vitest';
import { openAiChatResponseSchema } from './openai-schemas.ts';
import { plainOpenAiChatAnswer } from './plain-openai-answer.ts';

/** An answer as OpenAI sends it today: refusal and annotations on the message, every usage detail. */
const OPENAI_ANSWER = {
  id: 'chatcmpl-1',
  object: 'chat.completion',
  created: 1_764_000_000,
  model: 'gpt-4o-mini-2024-07-18',
  choices: [
    {
      index: 0,
      message: { role: 'assistant', content: 'Hello!', refusal: null, annotations: [] },
      logprobs: null,
      finish_reason: 'stop',
    },
  ],
  usage: {
    prompt_tokens: 9,
    completion_tokens: 3,
    total_tokens: 12,
    prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 },
    completion_tokens_details: {
      reasoning_tokens: 0,
      audio_tokens: 0,
      accepted_prediction_tokens: 0,
      rejected_prediction_tokens: 0,
    },
  },
  service_tier: 'default',
  system_fingerprint: 'fp_1',
};

const message = { role: 'assistant', content: 'Hi' };
const choice = { index: 0, message, finish_reason: 'stop' };
const answer = (members: Record<string, unknown>) => ({ id: 'c', created: 1, model: 'm', ...members });

/** Answers the hand reader reads; each must come out exactly as the schema makes it. */
const PLAIN: Array<[string, unknown]> = [
  ['as OpenAI sends it', OPENAI_ANSWER],
  [
    'the members in another order, unknown ones between them',
    {
      usage: { total_tokens: 5, queue_time: 0.1, completion_tokens: 2, prompt_tokens: 3 },
      service_tier: 'default',
      choices: [
        {
          logprobs: { content: [] },
          finish_reason: 'length',
          message: { content: 'x', stop_reason: null, role: 'assistant', reasoning_content: 'r' },
          index: 1,
        },
      ],
      object: 'chat.completion',
      model: 'm',
      '7': 'a numeric name',
      system_fingerprint: 'fp',
      created: 2,
      id: 'c',
    },
  ],
  [
    'optional members left out, and the defaults of id, model, index and role',
    { created: 1, choices: [{ message: {} }, { index: 3, message: { content: 'y' } }] },
  ],
  [
    'nulls wherever the schema takes them',
    answer({
      system_fingerprint: null,
      choices: [
        { index: 0, message: { role: 'assistant', content: null, tool_calls: null }, finish_reason: null },
      ],
      usage: {
        prompt_tokens: null,
        completion_tokens: null,
        total_tokens: null,
        prompt_tokens_details: null,
        completion_tokens_details: { reasoning_tokens: null, audio_tokens: 1, extra: { deep: [1] } },
      },
    }),
  ],
  ['usage null', answer({ choices: [choice], usage: null })],
  ['usage with only a total', answer({ choices: [choice], usage: { total_tokens: 4 } })],
  [
    'an empty list of tool calls (vLLM)',
    answer({ choices: [{ ...choice, message: { ...message, tool_calls: [] } }] }),
  ],
  ['no choices', answer({ choices: [] })],
  [
    'several choices',
    answer({ choices: [choice, { ...choice, index: 1, finish_reason: 'content_filter' }] }),
  ],
];

/** Answers the schema takes that the hand reader leaves to it. */
const SCHEMA_ONLY: Array<[string, unknown]> = [
  [
    'tool calls',
    answer({
      choices: [
        {
          ...choice,
          message: { ...message, tool_calls: [{ id: 't', function: { name: 'f', arguments: {} } }] },
        },
      ],
    }),
  ],
  ['no created (the schema stamps the time)', { id: 'c', model: 'm', choices: [choice] }],
  [
    'a __proto__ member, which the schema drops',
    JSON.parse('{"created":1,"choices":[],"__proto__":{"x":1}}'),
  ],
  [
    'a __proto__ member in a message',
    JSON.parse('{"created":1,"choices":[{"message":{"content":"a","__proto__":{"role":"x"}}}]}'),
  ],
];

/** Answers the schema refuses: the hand reader must leave them to it, so that the error stays the schema's. */
const REFUSED: Array<[string, unknown]> = [
  ['null', null],
  ['a string', 'Hello'],
  ['a list', [OPENAI_ANSWER]],
  ['no choices', { id: 'c', created: 1, model: 'm' }],
  ['choices not a list', answer({ choices: { 0: choice } })],
  ['an id that is a number', answer({ id: 7, choices: [] })],
  ['a created that is text', answer({ created: '1', choices: [] })],
  ['an infinite created (JSON 1e400)', answer({ created: Number.POSITIVE_INFINITY, choices: [] })],
  ['a null model', answer({ model: null, choices: [] })],
  ['a number as fingerprint', answer({ system_fingerprint: 5, choices: [] })],
  ['a choice that is not an object', answer({ choices: ['Hi'] })],
  ['a choice without a message', answer({ choices: [{ index: 0, finish_reason: 'stop' }] })],
  ['an index that is text', answer({ choices: [{ ...choice, index: '0' }] })],
  ['a null role', answer({ choices: [{ ...choice, message: { role: null, content: 'a' } }] })],
  ['content that is a number', answer({ choices: [{ ...choice, message: { content: 1 } }] })],
  ['a finish reason that is a number', answer({ choices: [{ ...choice, finish_reason: 7 }] })],
  ['tool calls that are not a list', answer({ choices: [{ ...choice, message: { tool_calls: 'none' } }] })],
  ['usage that is text', answer({ choices: [], usage: 'none' })],
  ['prompt tokens as text', answer({ choices: [], usage: { prompt_tokens: '9' } })],
  ['details that are a list', answer({ choices: [], usage: { prompt_tokens_details: [1] } })],
  [
    'cached tokens as text',
    answer({ choices: [], usage: { prompt_tokens_details: { cached_tokens: 'x' } } }),
  ],
];

/** What the hand reader and the schema make of an answer, as callJson hands it over (parsed JSON). */
function bothWays(input: unknown) {
  return { plain: plainOpenAiChatAnswer(input), schema: openAiChatResponseSchema.safeParse(input) };
}

describe('plainOpenAiChatAnswer', () => {
  it.each(PLAIN)(
    'reads an answer %s as the schema does: the same members, values and key order',
    (_, input) => {
      const { plain, schema } = bothWays(input);
      expect(plain).toBeDefined();
      expect(JSON.stringify(plain)).toBe(JSON.stringify(schema.data));
      expect(plain).toStrictEqual(schema.data);
    },
  );

  it.each(SCHEMA_ONLY)('leaves an answer with %s to the schema', (_, input) => {
    const { plain, schema } = bothWays(input);
    expect(plain).toBeUndefined();
    expect(schema.success).toBe(true);
  });

  it.each(REFUSED)('leaves an answer with %s to the schema, which refuses it', (_, input) => {
    const { plain, schema } = bothWays(input);
    expect(plain).toBeUndefined();
    expect(schema.success).toBe(false);
  });

  it("puts the schema's members first and the others after them in the order they came", () => {
    const plain = plainOpenAiChatAnswer({
      object: 'chat.completion',
      usage: { total_tokens: 2, prompt_tokens: 1, completion_tokens: 1 },
      choices: [{ message: { refusal: null, content: 'a', role: 'assistant' }, logprobs: null, index: 0 }],
      created: 1,
      service_tier: 'default',
      system_fingerprint: 'fp',
      model: 'm',
      id: 'c',
    });
    expect(Object.keys(plain!)).toEqual([
      'id',
      'created',
      'model',
      'system_fingerprint',
      'choices',
      'usage',
      'object',
      'service_tier',
    ]);
    expect(Object.keys(plain!.choices[0]!)).toEqual(['index', 'message', 'logprobs']);
    expect(Object.keys(plain!.choices[0]!.message)).toEqual(['role', 'content', 'refusal']);
    expect(Object.keys(plain!.usage!)).toEqual(['prompt_tokens', 'completion_tokens', 'total_tokens']);
  });
});
