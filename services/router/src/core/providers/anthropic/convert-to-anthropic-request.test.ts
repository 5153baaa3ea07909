import { describe, expect, it } from 'vitest';
import { convertToAnthropicRequest, DEFAULT_MAX_TOKENS } from './convert-to-anthropic-request.ts';

const messages = [{ role: 'user' as const, content: 'Hi' }];
const convert = (params: Record<string, unknown>, stream = false) =>
  convertToAnthropicRequest({ model: 'claude-sonnet-4-5', messages, params }, { stream });
const weatherTool = {
  type: 'function',
  function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } },
};

describe('convertToAnthropicRequest', () => {
  it('always sends max_tokens: the caller’s, else max_completion_tokens, else the default', () => {
    expect(convert({}).max_tokens).toBe(DEFAULT_MAX_TOKENS);
    expect(convert({ max_completion_tokens: 77 }).max_tokens).toBe(77);
    expect(convert({ max_tokens: 12, max_completion_tokens: 77 }).max_tokens).toBe(12);
  });

  it('takes stop_sequences, or OpenAI’s stop as a string or a list', () => {
    expect(convert({ stop_sequences: ['END'] }).stop_sequences).toEqual(['END']);
    expect(convert({ stop: 'END' }).stop_sequences).toEqual(['END']);
    expect(convert({ stop: ['A', 'B'] }).stop_sequences).toEqual(['A', 'B']);
    expect(convert({})).not.toHaveProperty('stop_sequences');
  });

  it('passes Anthropic’s own params and drops OpenAI-only ones', () => {
    const body = convert({
      top_k: 5,
      thinking: { type: 'enabled', budget_tokens: 1024 },
      service_tier: 'auto',
      seed: 7,
      n: 2,
      frequency_penalty: 0.5,
      logprobs: true,
    });
    expect(body).toEqual({
      model: 'claude-sonnet-4-5',
      max_tokens: DEFAULT_MAX_TOKENS,
      messages: [{ role: 'user', content: [{ type: 'text', text: 'Hi' }] }],
      top_k: 5,
      thinking: { type: 'enabled', budget_tokens: 1024 },
      service_tier: 'auto',
    });
  });

  it('sends a JSON schema response_format as Anthropic’s structured output, and refuses JSON mode', () => {
    const schema = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] };
    const body = convert({
      response_format: { type: 'json_schema', json_schema: { name: 'place', schema, strict: true } },
      output_config: { effort: 'low' },
    });
    expect(body.output_config).toEqual({ effort: 'low', format: { type: 'json_schema', schema } });
    expect(convert({ response_format: { type: 'text' } }).output_config).toBeUndefined();
    expect(() => convert({ response_format: { type: 'json_object' } })).toThrow(
      expect.objectContaining({ type: 'invalid_request', param: 'response_format' }),
    );
  });

  it('turns reasoning_effort into a thinking budget below max_tokens, unless thinking is set', () => {
    expect(convert({ reasoning_effort: 'medium', max_tokens: 1000 })).toMatchObject({
      thinking: { type: 'enabled', budget_tokens: 2048 },
      max_tokens: 3048,
    });
    expect(convert({ reasoning_effort: 'high' })).toMatchObject({ thinking: { budget_tokens: 4096 } });
    expect(convert({ reasoning_effort: 'minimal' }).thinking).toBeUndefined();
    const own = { type: 'enabled', budget_tokens: 9000 };
    expect(convert({ reasoning_effort: 'low', thinking: own }).thinking).toEqual(own);
    expect(() => convert({ reasoning_effort: 'extreme' })).toThrow(
      expect.objectContaining({ type: 'invalid_request', param: 'reasoning_effort' }),
    );
  });

  it('sends OpenAI’s user as metadata.user_id, beside metadata the caller gave', () => {
    expect(convert({ user: 'u-1' }).metadata).toEqual({ user_id: 'u-1' });
    expect(convert({ user: 'u-1', metadata: { user_id: 'u-2' } }).metadata).toEqual({ user_id: 'u-2' });
    expect(convert({ metadata: { user_id: 'u-3' } }).metadata).toEqual({ user_id: 'u-3' });
  });

  it('converts function tools, giving a parameterless one an empty schema', () => {
    const body = convert({
      tools: [weatherTool, { type: 'function', function: { name: 'now', description: 'The time' } }],
    });
    expect(body.tools).toEqual([
      { name: 'get_weather', input_schema: weatherTool.function.parameters },
      { name: 'now', description: 'The time', input_schema: { type: 'object', properties: {} } },
    ]);
  });

  it.each([
    ['auto', { type: 'auto' }],
    ['required', { type: 'any' }],
    ['none', { type: 'none' }],
    [
      { type: 'function', function: { name: 'get_weather' } },
      { type: 'tool', name: 'get_weather' },
    ],
  ])('maps tool_choice %j', (toolChoice, expected) => {
    expect(convert({ tools: [weatherTool], tool_choice: toolChoice }).tool_choice).toEqual(expected);
  });

  it('maps parallel_tool_calls: false onto tool_choice', () => {
    expect(convert({ tools: [weatherTool], parallel_tool_calls: false }).tool_choice).toEqual({
      type: 'auto',
      disable_parallel_tool_use: true,
    });
    expect(
      convert({ tools: [weatherTool], tool_choice: 'required', parallel_tool_calls: false }).tool_choice,
    ).toEqual({ type: 'any', disable_parallel_tool_use: true });
  });

  it('sends no tool_choice without tools (Anthropic would reject it)', () => {
    expect(convert({ tool_choice: 'auto' })).not.toHaveProperty('tool_choice');
  });

  it('asks for a stream only when streaming', () => {
    expect(convert({}, true).stream).toBe(true);
    expect(convert({})).not.toHaveProperty('stream');
  });
});
