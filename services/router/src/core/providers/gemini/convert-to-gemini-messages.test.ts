import { GatewayError, type Message } from '@gw/shared';
import { describe, expect, it } from 'vitest';
import { convertToGeminiMessages } from './convert-to-gemini-messages.ts';

describe('convertToGeminiMessages', () => {
  it('collects system and developer messages into systemInstruction', () => {
    const prompt = convertToGeminiMessages([
      { role: 'system', content: 'Be brief.' },
      { role: 'developer', content: [{ type: 'text', text: 'Answer in French.' }] },
      { role: 'user', content: 'Hi' },
    ]);
    expect(prompt.systemInstruction).toEqual({
      parts: [{ text: 'Be brief.' }, { text: 'Answer in French.' }],
    });
    expect(prompt.contents).toEqual([{ role: 'user', parts: [{ text: 'Hi' }] }]);
  });

  it('leaves systemInstruction out when there is no system message', () => {
    expect(convertToGeminiMessages([{ role: 'user', content: 'Hi' }])).not.toHaveProperty(
      'systemInstruction',
    );
  });

  it('names the assistant model and merges consecutive turns of one role', () => {
    const prompt = convertToGeminiMessages([
      { role: 'user', content: 'One' },
      { role: 'user', content: 'Two' },
      { role: 'assistant', content: 'Three' },
      { role: 'assistant', content: 'Four' },
    ]);
    expect(prompt.contents).toEqual([
      { role: 'user', parts: [{ text: 'One' }, { text: 'Two' }] },
      { role: 'model', parts: [{ text: 'Three' }, { text: 'Four' }] },
    ]);
  });

  it('turns tool calls into functionCall parts and tool results into functionResponse parts', () => {
    const messages: Message[] = [
      { role: 'user', content: 'Weather in Paris and Rome?' },
      {
        role: 'assistant',
        content: 'Checking.',
        tool_calls: [
          {
            id: 'call_a',
            type: 'function',
            function: { name: 'get_weather', arguments: '{"city":"Paris"}' },
          },
          { id: 'call_b', type: 'function', function: { name: 'get_time', arguments: '' } },
        ],
      },
      { role: 'tool', tool_call_id: 'call_b', content: 'noon' },
      { role: 'tool', tool_call_id: 'call_a', content: '{"temp":21}' },
      { role: 'user', content: 'Thanks' },
    ];
    expect(convertToGeminiMessages(messages).contents).toEqual([
      { role: 'user', parts: [{ text: 'Weather in Paris and Rome?' }] },
      {
        role: 'model',
        parts: [
          { text: 'Checking.' },
          { functionCall: { name: 'get_weather', args: { city: 'Paris' } } },
          { functionCall: { name: 'get_time', args: {} } },
        ],
      },
      {
        role: 'user',
        parts: [
          { functionResponse: { name: 'get_time', response: { content: 'noon' } } },
          { functionResponse: { name: 'get_weather', response: { temp: 21 } } },
          { text: 'Thanks' },
        ],
      },
    ]);
  });

  it('wraps tool results that are JSON but not an object', () => {
    const contents = convertToGeminiMessages([
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'c1', type: 'function', function: { name: 'list', arguments: '{}' } }],
      },
      { role: 'tool', tool_call_id: 'c1', content: '[1,2]' },
    ]).contents;
    expect(contents[1]?.parts).toEqual([
      { functionResponse: { name: 'list', response: { content: '[1,2]' } } },
    ]);
  });

  it('falls back to the message name for legacy function messages', () => {
    const contents = convertToGeminiMessages([
      { role: 'function', name: 'lookup', content: 'found' },
    ]).contents;
    expect(contents).toEqual([
      { role: 'user', parts: [{ functionResponse: { name: 'lookup', response: { content: 'found' } } }] },
    ]);
  });

  it('rejects a tool message that answers no earlier tool call', () => {
    expect(() => convertToGeminiMessages([{ role: 'tool', tool_call_id: 'nope', content: 'x' }])).toThrow(
      GatewayError,
    );
  });

  it('rejects tool call arguments that are not a JSON object', () => {
    const call = (text: string): Message[] => [
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: text } }],
      },
    ];
    expect(() => convertToGeminiMessages(call('{broken'))).toThrow(/not JSON/);
    expect(() => convertToGeminiMessages(call('[1]'))).toThrow(/not a JSON object/);
  });

  it('sends images inline from data URLs and by reference otherwise', () => {
    const contents = convertToGeminiMessages([
      {
        role: 'user',
        content: [
          { type: 'image_url', image_url: { url: 'data:image/jpeg;base64,/9j/4AAQ' } },
          { type: 'image_url', image_url: { url: 'https://example.com/a/photo.WEBP?size=large' } },
          { type: 'image_url', image_url: { url: 'https://example.com/render' } },
          { type: 'image_url', image_url: { url: 'gs://bucket/scan.png' } },
          { type: 'input_audio', input_audio: { data: 'UklGR', format: 'mp3' } },
        ],
      },
    ]).contents;
    expect(contents[0]?.parts).toEqual([
      { inlineData: { mimeType: 'image/jpeg', data: '/9j/4AAQ' } },
      { fileData: { mimeType: 'image/webp', fileUri: 'https://example.com/a/photo.WEBP?size=large' } },
      { fileData: { mimeType: 'image/jpeg', fileUri: 'https://example.com/render' } },
      { fileData: { mimeType: 'image/jpeg', fileUri: 'gs://bucket/scan.png' } },
      { inlineData: { mimeType: 'audio/mp3', data: 'UklGR' } },
    ]);
  });

  it('rejects content parts Gemini cannot take', () => {
    expect(() =>
      convertToGeminiMessages([{ role: 'user', content: [{ type: 'file', file: { file_id: 'f1' } }] }]),
    ).toThrow(/'file'/);
  });
});
