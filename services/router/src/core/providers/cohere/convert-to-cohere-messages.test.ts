import { GatewayError, type Message } from '@gw/shared';
import { describe, expect, it } from 'vitest';
import { convertToCohereMessages } from './convert-to-cohere-messages.ts';

describe('convertToCohereMessages', () => {
  it('sends system and developer messages as system', () => {
    expect(
      convertToCohereMessages([
        { role: 'system', content: 'Be brief.' },
        { role: 'developer', content: [{ type: 'text', text: 'Use French.' }] },
      ]),
    ).toEqual([
      { role: 'system', content: 'Be brief.' },
      { role: 'system', content: [{ type: 'text', text: 'Use French.' }] },
    ]);
  });

  it('keeps text and image parts, with detail only when given, and drops unknown members', () => {
    const messages: Message[] = [
      {
        role: 'user',
        name: 'ada',
        content: [
          { type: 'text', text: 'What is this?' },
          { type: 'image_url', image_url: { url: 'https://example.com/cat.png', detail: 'low' } },
          { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } },
        ],
      },
    ];
    expect(convertToCohereMessages(messages)).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'What is this?' },
          { type: 'image_url', image_url: { url: 'https://example.com/cat.png', detail: 'low' } },
          { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } },
        ],
      },
    ]);
  });

  it('sends an assistant answer as content and null content as an empty string', () => {
    expect(
      convertToCohereMessages([
        { role: 'assistant', content: 'Hello' },
        { role: 'assistant', content: null },
      ]),
    ).toEqual([
      { role: 'assistant', content: 'Hello' },
      { role: 'assistant', content: '' },
    ]);
  });

  it('turns text beside tool calls into the tool_plan', () => {
    const call = { id: 'call_1', type: 'function' as const, function: { name: 'f', arguments: '{"a":1}' } };
    expect(
      convertToCohereMessages([
        { role: 'assistant', content: 'I will call f.', tool_calls: [call] },
        { role: 'assistant', content: [{ type: 'text', text: 'Plan' }], tool_calls: [call] },
        { role: 'assistant', content: 'ignored', tool_plan: 'Cohere plan', tool_calls: [call] },
        { role: 'assistant', content: null, tool_calls: [call] },
      ]),
    ).toEqual([
      { role: 'assistant', tool_plan: 'I will call f.', tool_calls: [call] },
      { role: 'assistant', tool_plan: 'Plan', tool_calls: [call] },
      { role: 'assistant', tool_plan: 'Cohere plan', tool_calls: [call] },
      { role: 'assistant', tool_calls: [call] },
    ]);
  });

  it('sends tool results with their call id', () => {
    expect(
      convertToCohereMessages([
        { role: 'tool', tool_call_id: 'call_1', content: '{"temp":21}' },
        { role: 'tool', tool_call_id: 'call_2', content: [{ type: 'text', text: 'sunny' }] },
      ]),
    ).toEqual([
      { role: 'tool', tool_call_id: 'call_1', content: '{"temp":21}' },
      { role: 'tool', tool_call_id: 'call_2', content: [{ type: 'text', text: 'sunny' }] },
    ]);
  });

  it('refuses legacy function messages, which carry no call id', () => {
    expect(() => convertToCohereMessages([{ role: 'function', name: 'f', content: '1' }])).toThrow(
      GatewayError,
    );
  });
});
