import { describe, expect, it } from 'vitest';
import { chatAnswer, toolAnswer } from '../../../testing/fixtures/gemini-fixtures.ts';
import { geminiResponseSchema } from './gemini-schemas.ts';
import { mapGeminiResponse } from './map-gemini-response.ts';
import { mapGeminiUsage } from './map-gemini-usage.ts';

const map = (raw: unknown) => mapGeminiResponse(geminiResponseSchema.parse(raw), { raw, model: 'gemini-x' });

describe('mapGeminiResponse', () => {
  it('answers the text, responseId, modelVersion and usage with cached tokens', () => {
    const result = map(chatAnswer);
    expect(result).toMatchObject({
      id: chatAnswer.responseId,
      model: 'gemini-2.5-flash',
      choices: [{ index: 0, message: { role: 'assistant', content: 'Hello there' }, finish_reason: 'stop' }],
      usage: {
        prompt_tokens: 10,
        completion_tokens: 5,
        total_tokens: 15,
        prompt_tokens_details: { cached_tokens: 2 },
      },
      raw: chatAnswer,
    });
    expect(result.choices[0]?.message).not.toHaveProperty('tool_calls');
  });

  it('answers function calls as tool calls with fresh ids, and thinking tokens as completion tokens', () => {
    const result = map(toolAnswer);
    const choice = result.choices[0]!;
    expect(choice.finish_reason).toBe('tool_calls');
    expect(choice.message.content).toBeNull();
    expect(choice.message.tool_calls).toEqual([
      {
        id: expect.stringMatching(/^call_/),
        type: 'function',
        function: { name: 'get_weather', arguments: '{"city":"Paris"}' },
      },
    ]);
    expect(map(toolAnswer).choices[0]!.message.tool_calls![0]!.id).not.toBe(
      choice.message.tool_calls![0]!.id,
    );
    expect(result.usage).toEqual({
      prompt_tokens: 20,
      completion_tokens: 8,
      total_tokens: 28,
      completion_tokens_details: { reasoning_tokens: 3 },
    });
  });

  it('joins text parts, leaves out thought summaries and keeps every candidate', () => {
    const result = map({
      candidates: [
        { index: 1, content: { role: 'model', parts: [{ text: 'B' }] }, finishReason: 'MAX_TOKENS' },
        {
          index: 0,
          content: {
            role: 'model',
            parts: [{ text: 'thinking…', thought: true }, { text: 'A1' }, { text: 'A2' }],
          },
          finishReason: 'STOP',
        },
      ],
    });
    expect(
      result.choices.map((choice) => [choice.index, choice.message.content, choice.finish_reason]),
    ).toEqual([
      [0, 'A1A2', 'stop'],
      [1, 'B', 'length'],
    ]);
    expect(result.id).toMatch(/^chatcmpl_/);
    expect(result.model).toBe('gemini-x');
    expect(result.usage).toEqual({ prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 });
  });

  it('answers a blocked prompt as content_filter', () => {
    const result = map({
      promptFeedback: { blockReason: 'SAFETY' },
      usageMetadata: { promptTokenCount: 4, totalTokenCount: 4 },
    });
    expect(result.choices).toEqual([
      { index: 0, message: { role: 'assistant', content: null }, finish_reason: 'content_filter' },
    ]);
    expect(result.usage).toEqual({ prompt_tokens: 4, completion_tokens: 0, total_tokens: 4 });
  });

  it('answers a candidate stopped for safety as content_filter', () => {
    const result = map({ candidates: [{ finishReason: 'SAFETY', index: 0 }] });
    expect(result.choices[0]).toEqual({
      index: 0,
      message: { role: 'assistant', content: null },
      finish_reason: 'content_filter',
    });
  });
});

describe('mapGeminiUsage', () => {
  it('totals prompt and completion when Gemini leaves the total out', () => {
    expect(mapGeminiUsage({ promptTokenCount: 3, candidatesTokenCount: 4 })).toEqual({
      prompt_tokens: 3,
      completion_tokens: 4,
      total_tokens: 7,
    });
  });
});
