import { GatewayError, type Message } from '@gw/shared';
import { describe, expect, it } from 'vitest';
import { convertToAnthropicMessages } from './convert-to-anthropic-messages.ts';

const text = (value: string) => ({ type: 'text', text: value });

describe('convertToAnthropicMessages', () => {
  it('moves system and developer messages, wherever they stand, into one system prompt', () => {
    const prompt = convertToAnthropicMessages([
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Hi' },
      { role: 'developer', content: [{ type: 'text', text: 'Answer in French.' }] },
    ]);
    expect(prompt.system).toBe('Be brief.\n\nAnswer in French.');
    expect(prompt.messages).toEqual([{ role: 'user', content: [text('Hi')] }]);
  });

  it('keeps cache breakpoints: on text and image parts, and on system prompts (then given as blocks)', () => {
    const marker = { type: 'ephemeral' };
    const prompt = convertToAnthropicMessages([
      { role: 'system', content: [{ type: 'text', text: 'Stable preamble', cache_control: marker }] },
      { role: 'system', content: 'Today is Monday' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Look', cache_control: marker },
          { type: 'image_url', image_url: { url: 'https://example.com/a.png' }, cache_control: marker },
        ],
      },
    ]);
    expect(prompt.system).toEqual([
      { type: 'text', text: 'Stable preamble', cache_control: marker },
      { type: 'text', text: 'Today is Monday' },
    ]);
    expect(prompt.messages[0]!.content).toEqual([
      { type: 'text', text: 'Look', cache_control: marker },
      { type: 'image', source: { type: 'url', url: 'https://example.com/a.png' }, cache_control: marker },
    ]);
  });

  it('leaves system out when there is none', () => {
    expect(convertToAnthropicMessages([{ role: 'user', content: 'Hi' }]).system).toBeUndefined();
  });

  it('merges consecutive messages of the same role so turns alternate', () => {
    const prompt = convertToAnthropicMessages([
      { role: 'user', content: 'one' },
      { role: 'user', content: [{ type: 'text', text: 'two' }] },
      { role: 'assistant', content: 'three' },
      { role: 'assistant', content: 'four' },
      { role: 'user', content: 'five' },
    ]);
    expect(prompt.messages).toEqual([
      { role: 'user', content: [text('one'), text('two')] },
      { role: 'assistant', content: [text('three'), text('four')] },
      { role: 'user', content: [text('five')] },
    ]);
  });

  it('turns assistant tool calls into tool_use blocks after its text, with parsed input', () => {
    const prompt = convertToAnthropicMessages([
      { role: 'user', content: 'Weather in Paris and Rome?' },
      {
        role: 'assistant',
        content: 'Checking.',
        tool_calls: [
          {
            id: 'call_1',
            type: 'function',
            function: { name: 'get_weather', arguments: '{"city":"Paris"}' },
          },
          { id: 'call_2', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Rome"}' } },
        ],
      },
    ]);
    expect(prompt.messages[1]).toEqual({
      role: 'assistant',
      content: [
        text('Checking.'),
        { type: 'tool_use', id: 'call_1', name: 'get_weather', input: { city: 'Paris' } },
        { type: 'tool_use', id: 'call_2', name: 'get_weather', input: { city: 'Rome' } },
      ],
    });
  });

  it('takes empty arguments as an empty input', () => {
    const prompt = convertToAnthropicMessages([
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'c', type: 'function', function: { name: 'now', arguments: '' } }],
      },
    ]);
    expect(prompt.messages[0]!.content).toEqual([{ type: 'tool_use', id: 'c', name: 'now', input: {} }]);
  });

  it('merges consecutive tool results, and a user message after them, into one user turn', () => {
    const prompt = convertToAnthropicMessages([
      { role: 'tool', tool_call_id: 'call_1', content: '{"temp":21}' },
      { role: 'tool', tool_call_id: 'call_2', content: [{ type: 'text', text: '{"temp":25}' }] },
      { role: 'user', content: 'And tomorrow?' },
    ]);
    expect(prompt.messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'call_1', content: '{"temp":21}' },
          { type: 'tool_result', tool_use_id: 'call_2', content: [text('{"temp":25}')] },
          text('And tomorrow?'),
        ],
      },
    ]);
  });

  it('sends data URL images as base64 and http(s) images as URLs', () => {
    const prompt = convertToAnthropicMessages([
      {
        role: 'user',
        content: [
          { type: 'image_url', image_url: { url: 'data:image/jpeg;base64,/9j/4AAQ' } },
          { type: 'image_url', image_url: { url: 'https://example.com/cat.png', detail: 'low' } },
        ],
      },
    ]);
    expect(prompt.messages[0]!.content).toEqual([
      { type: 'image', source: { type: 'base64', media_type: 'image/jpeg', data: '/9j/4AAQ' } },
      { type: 'image', source: { type: 'url', url: 'https://example.com/cat.png' } },
    ]);
  });

  it('passes other part types through as Anthropic blocks', () => {
    const document = { type: 'document', source: { type: 'url', url: 'https://example.com/a.pdf' } };
    const prompt = convertToAnthropicMessages([{ role: 'user', content: [document] } as Message]);
    expect(prompt.messages[0]!.content).toEqual([document]);
  });

  it('drops empty text, and messages left without content', () => {
    const prompt = convertToAnthropicMessages([
      { role: 'user', content: 'Hi' },
      { role: 'assistant', content: '' },
      {
        role: 'user',
        content: [
          { type: 'text', text: '' },
          { type: 'text', text: 'there' },
        ],
      },
    ]);
    expect(prompt.messages).toEqual([{ role: 'user', content: [text('Hi'), text('there')] }]);
  });

  it.each([
    [
      'an image URL that is neither data nor http(s)',
      { role: 'user', content: [{ type: 'image_url', image_url: { url: 'ftp://x/y.png' } }] },
      'messages[0].content[0].image_url.url',
    ],
    [
      'tool call arguments that are not a JSON object',
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '[1]' } }],
      },
      'messages[0].tool_calls[0].function.arguments',
    ],
    ['a tool message without tool_call_id', { role: 'tool', content: 'x' }, 'messages[0].tool_call_id'],
    ['the legacy function role', { role: 'function', name: 'f', content: 'x' }, 'messages[0].role'],
  ])('rejects %s as an invalid request', (_title, message, param) => {
    const attempt = () => convertToAnthropicMessages([message as Message]);
    expect(attempt).toThrow(GatewayError);
    try {
      attempt();
    } catch (error) {
      expect(error).toMatchObject({ type: 'invalid_request', param });
    }
  });
});
