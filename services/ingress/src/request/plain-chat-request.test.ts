import { chatRequestSchema, messageSchema, paramsSchema } from '@gw/shared';
import { describe, expect, it } from 'vitest';
import { plainChatRequest, plainParamsValid } from './plain-chat-request.ts';

const messages = [{ role: 'user', content: 'hi' }];
const request = (members: Record<string, unknown>) => ({ model: 'openai/gpt-4o-mini', messages, ...members });

/** Requests the hand reader reads; each must come out exactly as the schema makes it. */
const PLAIN: Array<[string, unknown]> = [
  ['as the bench asks', { model: 'openai/gpt-4o-mini', messages, max_tokens: 16 }],
  [
    'as the OpenAI SDK sends a conversation',
    {
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'developer', content: 'No lists.', name: 'ops' },
        { role: 'user', content: 'Weather?', name: 'ann' },
        { role: 'assistant', content: null, refusal: null },
        { role: 'tool', content: '{"sunny":true}', tool_call_id: 'call_1' },
        { content: 'And tomorrow?', role: 'user' },
      ],
      model: 'gpt-4o',
      max_completion_tokens: 100,
      temperature: 0.2,
      top_p: 1,
      n: 1,
      stop: ['\n\n'],
      user: 'u-1',
      seed: 7,
      logit_bias: { 50256: -100 },
      presence_penalty: 0,
      stream: true,
      metadata: { team: 'a' },
      stream_options: { include_usage: true },
      store: false,
    },
  ],
  [
    "gw's own members in another order, unknown ones between them",
    {
      provider: 'openai',
      '3': 'a numeric name',
      stream_options: { extra: 1, include_usage: false },
      fallbacks: ['azure/gpt-4o', 'groq/llama'],
      stream: false,
      model: 'gpt-4o',
      reasoning_effort: 'low',
      messages: [{ tool_call_id: 't', name: 'n', extra: [1], content: '', role: 'tool' }],
    },
  ],
  ['a message without content', request({ messages: [{ role: 'assistant' }] })],
  ['an empty list of fallbacks', request({ fallbacks: [] })],
  [
    'members that are undefined',
    request({ stream: undefined, fallbacks: undefined, stream_options: undefined }),
  ],
  [
    'message members that are undefined',
    request({ messages: [{ role: 'user', content: undefined, name: undefined, tool_calls: undefined }] }),
  ],
];

/** Requests the schema takes that the hand reader leaves to it. */
const SCHEMA_ONLY: Array<[string, unknown]> = [
  ["gw's native params", request({ params: { max_tokens: 5 } })],
  ['content parts', request({ messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }] })],
  [
    'tool calls',
    request({
      messages: [{ role: 'assistant', tool_calls: [{ id: 'c', function: { name: 'f' } }] }],
    }),
  ],
  [
    'a __proto__ member, which the schema drops',
    JSON.parse('{"model":"m","messages":[{"role":"user"}],"__proto__":{}}'),
  ],
  [
    'a __proto__ member in a message',
    JSON.parse('{"model":"m","messages":[{"role":"user","__proto__":{}}]}'),
  ],
];

/** Requests the schema refuses: the hand reader must leave them to it, so that the 400 stays the schema's. */
const REFUSED: Array<[string, unknown]> = [
  ['null', null],
  ['a list', [request({})]],
  ['no model', { messages }],
  ['an empty model', request({ model: '' })],
  ['a model that is a number', request({ model: 4 })],
  ['no messages', { model: 'm' }],
  ['an empty list of messages', request({ messages: [] })],
  ['messages that are text', request({ messages: 'hi' })],
  ['a message that is text', request({ messages: ['hi'] })],
  ['an unknown role', request({ messages: [{ role: 'wizard', content: 'x' }] })],
  ['no role', request({ messages: [{ content: 'x' }] })],
  ['content that is a number', request({ messages: [{ role: 'user', content: 1 }] })],
  ['a name that is a number', request({ messages: [{ role: 'user', content: 'x', name: 1 }] })],
  [
    'a tool call id that is null',
    request({ messages: [{ role: 'tool', content: 'x', tool_call_id: null }] }),
  ],
  ['tool calls that are null', request({ messages: [{ role: 'assistant', tool_calls: null }] })],
  ['stream as text', request({ stream: 'yes' })],
  ['stream null', request({ stream: null })],
  ['stream options null', request({ stream_options: null })],
  ['include_usage as text', request({ stream_options: { include_usage: 'yes' } })],
  ['an empty fallback', request({ fallbacks: [''] })],
  ['fallbacks as text', request({ fallbacks: 'openai/x' })],
  ['a provider that is a number', request({ provider: 1 })],
];

describe('plainChatRequest', () => {
  it.each(PLAIN)(
    'reads a request %s as the schema does: the same members, values and key order',
    (_, input) => {
      const plain = plainChatRequest(input);
      const schema = chatRequestSchema.safeParse(input);
      expect(plain).toBeDefined();
      expect(JSON.stringify(plain)).toBe(JSON.stringify(schema.data));
      expect(plain).toStrictEqual(schema.data);
    },
  );

  it.each(SCHEMA_ONLY)('leaves a request with %s to the schema', (_, input) => {
    expect(plainChatRequest(input)).toBeUndefined();
    expect(chatRequestSchema.safeParse(input).success).toBe(true);
  });

  it.each(REFUSED)('leaves a request with %s to the schema, which refuses it', (_, input) => {
    expect(plainChatRequest(input)).toBeUndefined();
    expect(chatRequestSchema.safeParse(input).success).toBe(false);
  });

  it("puts the schema's members first and the others after them in the order they came", () => {
    const plain = plainChatRequest({
      temperature: 1,
      stream: true,
      messages: [{ refusal: null, content: 'a', role: 'assistant' }],
      user: 'u',
      model: 'm',
    });
    expect(Object.keys(plain!)).toEqual(['model', 'messages', 'stream', 'temperature', 'user']);
    expect(Object.keys(plain!.messages[0]!)).toEqual(['role', 'content', 'refusal']);
  });

  it('knows every member the schemas declare (a new one must be taught to the hand reader)', () => {
    expect(Object.keys(chatRequestSchema.shape)).toEqual([
      'model',
      'messages',
      'params',
      'fallbacks',
      'stream',
      'stream_options',
      'provider',
    ]);
    expect(Object.keys(messageSchema.shape)).toEqual([
      'role',
      'content',
      'name',
      'tool_calls',
      'tool_call_id',
    ]);
    expect(Object.keys(paramsSchema.shape)).toEqual([
      'max_tokens',
      'max_completion_tokens',
      'temperature',
      'top_p',
      'stop_sequences',
      'stop',
      'tools',
      'tool_choice',
      'response_format',
      'n',
      'seed',
      'user',
    ]);
  });
});

describe('plainParamsValid', () => {
  it.each([
    {},
    { max_tokens: 16 },
    { max_completion_tokens: 1, n: 2, seed: -3, user: 'u' },
    { temperature: 0, top_p: 1 },
    { temperature: 2, top_p: 0 },
    { stop: 'END' },
    { stop: [] },
    { stop_sequences: ['a', 'b'] },
    { logit_bias: { 1: 2 }, metadata: null, reasoning_effort: 'low' },
    { max_tokens: undefined },
  ])('answers true without the schema for %j, which it takes', (params) => {
    expect(plainParamsValid(params)).toBe(true);
    expect(paramsSchema.safeParse(params).success).toBe(true);
  });

  it.each([
    { tools: [{ type: 'function', function: { name: 'f' } }] },
    { tool_choice: 'auto' },
    { response_format: { type: 'json_object' } },
  ])('leaves %j to the schema', (params) => {
    expect(plainParamsValid(params)).toBe(false);
    expect(paramsSchema.safeParse(params).success).toBe(true);
  });

  it.each([
    { max_tokens: 0 },
    { max_tokens: 1.5 },
    { max_tokens: '16' },
    { max_tokens: 2 ** 60 },
    { max_tokens: null },
    { max_completion_tokens: -1 },
    { n: 0 },
    { seed: 0.5 },
    { temperature: 2.1 },
    { temperature: -0.1 },
    { temperature: '1' },
    { temperature: Number.POSITIVE_INFINITY },
    { top_p: 1.01 },
    { stop: 5 },
    { stop: ['a', 1] },
    { stop_sequences: 'a' },
    { user: 5 },
  ])('answers false for %j, which the schema refuses', (params) => {
    expect(plainParamsValid(params)).toBe(false);
    expect(paramsSchema.safeParse(params).success).toBe(false);
  });
});
