import { GatewayError, type Message } from '@gw/shared';
import { describe, expect, it } from 'vitest';
import { convertToBedrockRequest } from './convert-to-bedrock-request.ts';

const WEATHER = {
  type: 'function' as const,
  function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } },
};

function convert(messages: Message[], params: Record<string, unknown> = {}) {
  return convertToBedrockRequest({ messages, params });
}

function failure(run: () => unknown): GatewayError {
  try {
    run();
  } catch (error) {
    if (error instanceof GatewayError) return error;
    throw error;
  }
  throw new Error('expected a GatewayError');
}

describe('convertToBedrockRequest', () => {
  it('moves system and developer messages to system blocks and merges consecutive turns of a role', () => {
    const body = convert([
      { role: 'system', content: 'Be brief.' },
      { role: 'developer', content: [{ type: 'text', text: 'Answer in French.' }] },
      { role: 'user', content: 'Hi' },
      { role: 'user', content: 'Still there?' },
      { role: 'assistant', content: 'Oui.' },
    ]);
    expect(body).toEqual({
      system: [{ text: 'Be brief.' }, { text: 'Answer in French.' }],
      messages: [
        { role: 'user', content: [{ text: 'Hi' }, { text: 'Still there?' }] },
        { role: 'assistant', content: [{ text: 'Oui.' }] },
      ],
    });
  });

  it('turns several tool results and a following user text into one user turn', () => {
    const body = convert([
      { role: 'user', content: 'Weather in Paris and Rome?' },
      {
        role: 'assistant',
        content: 'Checking both.',
        tool_calls: [
          {
            id: 'call_1',
            type: 'function',
            function: { name: 'get_weather', arguments: '{"city":"Paris"}' },
          },
          { id: 'call_2', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Rome"}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'call_1', content: '{"temp":21}' },
      { role: 'tool', tool_call_id: 'call_2', content: 'sunny, 25 degrees' },
      { role: 'user', content: 'Thanks' },
    ]);
    expect(body['messages']).toEqual([
      { role: 'user', content: [{ text: 'Weather in Paris and Rome?' }] },
      {
        role: 'assistant',
        content: [
          { text: 'Checking both.' },
          { toolUse: { toolUseId: 'call_1', name: 'get_weather', input: { city: 'Paris' } } },
          { toolUse: { toolUseId: 'call_2', name: 'get_weather', input: { city: 'Rome' } } },
        ],
      },
      {
        role: 'user',
        content: [
          { toolResult: { toolUseId: 'call_1', content: [{ json: { temp: 21 } }] } },
          { toolResult: { toolUseId: 'call_2', content: [{ text: 'sunny, 25 degrees' }] } },
          { text: 'Thanks' },
        ],
      },
    ]);
  });

  it('sends data URL images as bytes with their format', () => {
    const body = convert([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'What is this?' },
          { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=', detail: 'high' } },
          { type: 'image_url', image_url: { url: 'data:image/jpg;base64,/9j/4AAQ' } },
        ],
      },
    ]);
    expect(body['messages']).toEqual([
      {
        role: 'user',
        content: [
          { text: 'What is this?' },
          { image: { format: 'png', source: { bytes: 'iVBORw0KGgo=' } } },
          { image: { format: 'jpeg', source: { bytes: '/9j/4AAQ' } } },
        ],
      },
    ]);
  });

  it('refuses image URLs with a 400 that says how to send the image instead', () => {
    const error = failure(() =>
      convert([
        { role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://example.com/cat.png' } }] },
      ]),
    );
    expect(error.type).toBe('invalid_request');
    expect(error.status).toBe(400);
    expect(error.message).toContain('bedrock does not fetch image URLs');
    expect(error.message).toContain('data URL');
    expect(error.param).toBe('messages[0].content[0].image_url.url');
  });

  it('refuses image formats Converse does not take', () => {
    const error = failure(() =>
      convert([
        { role: 'user', content: [{ type: 'image_url', image_url: { url: 'data:image/tiff;base64,AAAA' } }] },
      ]),
    );
    expect(error.message).toContain('image/tiff');
  });

  it('maps inference params, preferring stop_sequences and max_tokens', () => {
    const messages: Message[] = [{ role: 'user', content: 'Hi' }];
    expect(
      convert(messages, { max_completion_tokens: 9, top_p: 0.5, stop: 'END' })['inferenceConfig'],
    ).toEqual({
      maxTokens: 9,
      topP: 0.5,
      stopSequences: ['END'],
    });
    expect(
      convert(messages, { max_tokens: 5, max_completion_tokens: 9, stop: ['A'], stop_sequences: ['B'] })[
        'inferenceConfig'
      ],
    ).toEqual({ maxTokens: 5, stopSequences: ['B'] });
  });

  it.each([
    ['auto', { auto: {} }],
    ['required', { any: {} }],
    [{ type: 'function', function: { name: 'get_weather' } }, { tool: { name: 'get_weather' } }],
  ])('maps tool_choice %j', (choice, expected) => {
    const body = convert([{ role: 'user', content: 'Hi' }], { tools: [WEATHER], tool_choice: choice });
    expect(body['toolConfig']).toEqual({
      tools: [{ toolSpec: { name: 'get_weather', inputSchema: { json: WEATHER.function.parameters } } }],
      toolChoice: expected,
    });
  });

  it("leaves the tools out for tool_choice 'none' (Converse has no such choice)", () => {
    const body = convert([{ role: 'user', content: 'Hi' }], { tools: [WEATHER], tool_choice: 'none' });
    expect(body['toolConfig']).toBeUndefined();
  });

  it('passes unknown params to additionalModelRequestFields, Converse fields to the body, and drops OpenAI-only ones', () => {
    const body = convert([{ role: 'user', content: 'Hi' }], {
      top_k: 40,
      additionalModelRequestFields: { anthropic_beta: ['x'] },
      guardrailConfig: { guardrailIdentifier: 'g1', guardrailVersion: '1' },
      n: 1,
      seed: 7,
      user: 'u1',
      response_format: { type: 'text' },
    });
    expect(body).toEqual({
      messages: [{ role: 'user', content: [{ text: 'Hi' }] }],
      guardrailConfig: { guardrailIdentifier: 'g1', guardrailVersion: '1' },
      additionalModelRequestFields: { top_k: 40, anthropic_beta: ['x'] },
    });
  });

  it('turns cache breakpoints into cachePoint blocks after what they close, system included', () => {
    const marker = { type: 'ephemeral' };
    const body = convert([
      { role: 'system', content: [{ type: 'text', text: 'Stable preamble', cache_control: marker }] },
      { role: 'user', content: [{ type: 'text', text: 'Question', cache_control: marker }] },
    ]);
    expect(body['system']).toEqual([{ text: 'Stable preamble' }, { cachePoint: { type: 'default' } }]);
    expect(body['messages']).toEqual([
      { role: 'user', content: [{ text: 'Question' }, { cachePoint: { type: 'default' } }] },
    ]);
  });

  it('serves a structured response_format through a forced answer tool whose input schema is the schema', () => {
    const schema = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] };
    const body = convert([{ role: 'user', content: 'Hi' }], {
      response_format: { type: 'json_schema', json_schema: { name: 'place', schema } },
    });
    expect(body['toolConfig']).toEqual({
      tools: [
        {
          toolSpec: {
            name: 'json_tool_call',
            description: "Answer with the JSON object 'place' its input schema describes.",
            inputSchema: { json: schema },
          },
        },
      ],
      toolChoice: { tool: { name: 'json_tool_call' } },
    });
    expect(body['additionalModelRequestFields']).toBeUndefined();
  });

  it('puts the answer tool beside the caller’s tools, a call of some tool required', () => {
    const body = convert([{ role: 'user', content: 'Hi' }], {
      response_format: { type: 'json_object' },
      tools: [{ type: 'function', function: { name: 'lookup', parameters: { type: 'object' } } }],
    });
    expect(body['toolConfig']).toMatchObject({
      tools: [{ toolSpec: { name: 'lookup' } }, { toolSpec: { name: 'json_tool_call' } }],
      toolChoice: { any: {} },
    });
  });

  it('refuses a response_format type that is none of OpenAI’s', () => {
    const error = failure(() =>
      convert([{ role: 'user', content: 'Hi' }], { response_format: { type: 'yaml' } }),
    );
    expect(error).toMatchObject({ type: 'invalid_request', status: 400, param: 'response_format' });
  });

  it('refuses tool call arguments that are not a JSON object', () => {
    const error = failure(() =>
      convert([
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '[1]' } }],
        },
      ]),
    );
    expect(error.param).toBe('messages[0].tool_calls[0].function.arguments');
  });
});
