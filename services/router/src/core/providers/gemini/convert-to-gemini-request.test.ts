import type { Message } from '@gw/shared';
import { describe, expect, it } from 'vitest';
import { convertJsonSchemaToGeminiSchema } from './convert-json-schema-to-gemini-schema.ts';
import { convertToGeminiRequest } from './convert-to-gemini-request.ts';

const messages: Message[] = [{ role: 'user', content: 'Hi' }];
const request = (params: Record<string, unknown>) => convertToGeminiRequest({ model: 'm', messages, params });

describe('convertToGeminiRequest', () => {
  it('sends only contents when there are no params', () => {
    expect(request({})).toEqual({ contents: [{ role: 'user', parts: [{ text: 'Hi' }] }] });
  });

  it('maps the sampling params into generationConfig', () => {
    expect(
      request({
        max_tokens: 10,
        max_completion_tokens: 20,
        temperature: 0.5,
        top_p: 0.9,
        stop: 'STOP',
        n: 2,
        seed: 7,
        presence_penalty: 0.1,
        frequency_penalty: 0.2,
        user: 'u-1',
      }).generationConfig,
    ).toEqual({
      maxOutputTokens: 20,
      temperature: 0.5,
      topP: 0.9,
      stopSequences: ['STOP'],
      candidateCount: 2,
      seed: 7,
      presencePenalty: 0.1,
      frequencyPenalty: 0.2,
    });
  });

  it('prefers stop_sequences over stop', () => {
    expect(request({ stop_sequences: ['A'], stop: ['B'] }).generationConfig).toEqual({
      stopSequences: ['A'],
    });
  });

  it('asks for JSON for json_object and json_schema response formats', () => {
    expect(request({ response_format: { type: 'json_object' } }).generationConfig).toEqual({
      responseMimeType: 'application/json',
    });
    const schema = {
      $schema: 'http://json-schema.org/draft-07/schema#',
      type: 'object',
      properties: { name: { type: 'string' }, age: { type: ['integer', 'null'] } },
      required: ['name'],
      additionalProperties: false,
    };
    expect(
      request({ response_format: { type: 'json_schema', json_schema: { name: 'person', schema } } })
        .generationConfig,
    ).toEqual({
      responseMimeType: 'application/json',
      responseSchema: {
        type: 'object',
        properties: { name: { type: 'string' }, age: { type: 'integer', nullable: true } },
        required: ['name'],
      },
    });
    expect(request({ response_format: { type: 'text' } })).not.toHaveProperty('generationConfig');
  });

  it('declares tools, leaving out the schema of functions without arguments', () => {
    const body = request({
      tools: [
        { type: 'function', function: { name: 'now', parameters: { type: 'object', properties: {} } } },
        {
          type: 'function',
          function: {
            name: 'find',
            description: 'Finds things',
            parameters: {
              type: 'object',
              properties: { q: { type: 'string' } },
              additionalProperties: false,
            },
          },
        },
      ],
    });
    expect(body['tools']).toEqual([
      {
        functionDeclarations: [
          { name: 'now' },
          {
            name: 'find',
            description: 'Finds things',
            parameters: { type: 'object', properties: { q: { type: 'string' } } },
          },
        ],
      },
    ]);
  });

  it.each([
    ['auto', { mode: 'AUTO' }],
    ['none', { mode: 'NONE' }],
    ['required', { mode: 'ANY' }],
    [
      { type: 'function', function: { name: 'find' } },
      { mode: 'ANY', allowedFunctionNames: ['find'] },
    ],
  ])('maps tool_choice %j', (choice, config) => {
    expect(request({ tool_choice: choice })['toolConfig']).toEqual({ functionCallingConfig: config });
  });

  it('passes through extras that name Gemini fields and drops the others', () => {
    const safety = [{ category: 'HARM_CATEGORY_HARASSMENT', threshold: 'BLOCK_NONE' }];
    const body = request({
      top_k: 40,
      thinking_config: { thinkingBudget: 0 },
      safety_settings: safety,
      cachedContent: 'cachedContents/abc',
      generation_config: { responseModalities: ['TEXT'] },
      stream_options: { include_usage: true },
      logit_bias: { 1: 2 },
    });
    expect(body).toEqual({
      contents: [{ role: 'user', parts: [{ text: 'Hi' }] }],
      generationConfig: { topK: 40, thinkingConfig: { thinkingBudget: 0 }, responseModalities: ['TEXT'] },
      safetySettings: safety,
      cachedContent: 'cachedContents/abc',
    });
  });
});

describe('thought signatures of replayed function calls', () => {
  const history: Message[] = [
    {
      role: 'assistant',
      content: null,
      tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } }],
    },
    { role: 'tool', tool_call_id: 'c1', content: 'done' },
  ];
  const modelTurn = (model: string) =>
    (
      convertToGeminiRequest({ model, messages: history, params: {} })['contents'] as Array<{
        parts: unknown[];
      }>
    )[0];

  it.each(['gemini-3-pro-preview', 'gemini-3.1-flash', 'models/gemini-4-argon'])(
    'marks them as unsigned for %s, which rejects calls without a signature',
    (model) => {
      expect(modelTurn(model)?.parts).toEqual([
        { functionCall: { name: 'f', args: {} }, thoughtSignature: 'skip_thought_signature_validator' },
      ]);
    },
  );

  it.each(['gemini-2.5-flash', 'gemini-1.5-pro', 'gemma-3-27b-it'])('leaves them alone for %s', (model) => {
    expect(modelTurn(model)?.parts).toEqual([{ functionCall: { name: 'f', args: {} } }]);
  });
});

describe('convertJsonSchemaToGeminiSchema', () => {
  it('converts nested items, const and anyOf, and drops unknown members', () => {
    expect(
      convertJsonSchemaToGeminiSchema({
        type: 'array',
        items: {
          anyOf: [
            { type: 'string', const: 'x' },
            { type: 'number', $comment: 'no' },
          ],
        },
        $defs: {},
      }),
    ).toEqual({ type: 'array', items: { anyOf: [{ type: 'string', enum: ['x'] }, { type: 'number' }] } });
    expect(convertJsonSchemaToGeminiSchema('not a schema')).toBeUndefined();
  });

  it('turns reasoning_effort into a thinking budget, a caller’s own thinkingConfig winning', () => {
    expect(request({ reasoning_effort: 'low' })['generationConfig']).toEqual({
      thinkingConfig: { thinkingBudget: 1024 },
    });
    expect(request({ reasoning_effort: 'none' })['generationConfig']).toEqual({
      thinkingConfig: { thinkingBudget: 0 },
    });
    expect(
      request({ reasoning_effort: 'high', thinking_config: { thinkingBudget: 77 } })['generationConfig'],
    ).toEqual({ thinkingConfig: { thinkingBudget: 77 } });
  });
});
