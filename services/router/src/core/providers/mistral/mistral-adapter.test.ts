import {
  openAiRequestExpectations,
  PROVIDER_CONTRACT_INPUTS,
  runProviderContract,
} from '@gw/testkit/provider-contract';
import { describe, expect, it } from 'vitest';
import { openAiWireFixtures, textViaChatAnswer } from '../../../testing/fixtures/openai-wire-fixtures.ts';
import { convertToMistralBody } from './convert-to-mistral-body.ts';
import { toMistralToolCallId } from './convert-to-mistral-messages.ts';
import { mistralAdapter } from './mistral-adapter.ts';
import { readMistralErrorMessage } from './mistral-error.ts';

const model = 'mistral-small-latest';
// Mistral's true format: usage on the finish chunk, tool calls whole in one delta, its own error body.
const style = {
  model,
  streamUsage: 'finish-chunk',
  streamToolCall: 'whole',
  toolCallId: 'D681PevKs',
  errorBody: {
    object: 'error',
    message: 'bad things happened',
    type: 'invalid_request_error',
    param: null,
    code: null,
  },
  // Mistral reports prompt-cache hits in OpenAI's `prompt_tokens_details.cached_tokens`, and the seconds of audio
  // in the prompt (a Voxtral chat) in `prompt_audio_seconds`, billed by the minute.
  billedUsage: {
    wire: {
      prompt_tokens: 1_200,
      total_tokens: 1_500,
      completion_tokens: 300,
      prompt_audio_seconds: 30,
      prompt_tokens_details: { cached_tokens: 1_024 },
    },
    expected: {
      prompt_tokens: 1_200,
      completion_tokens: 300,
      total_tokens: 1_500,
      prompt_tokens_details: { cached_tokens: 1_024 },
      units: { audio_seconds: 30 },
    },
  },
} as const;
const wire = openAiWireFixtures(style);
const requests = openAiRequestExpectations({
  model,
  headers: { authorization: 'Bearer mistral-key' },
  streamOptions: false,
  textViaChat: true,
});

runProviderContract({
  name: 'mistral',
  adapter: mistralAdapter,
  model,
  key: { id: 'k1', value: 'mistral-key', config: {} },
  upstream: {
    ...wire.upstream,
    text: () => ({ body: textViaChatAnswer(style) }),
    textStream: undefined,
  },
  billedUsage: wire.billedUsage,
  expectRequest: {
    ...requests,
    chatTools: (request) => {
      const [user, assistant, tool] = (request.body as { messages: Array<Record<string, unknown>> }).messages;
      expect(user).toEqual({ role: 'user', content: 'Weather in Paris?' });
      expect(assistant).toMatchObject({ tool_calls: [{ id: toMistralToolCallId('call_1') }] });
      expect(tool).toEqual({
        role: 'tool',
        content: '{"temp":21}',
        tool_call_id: toMistralToolCallId('call_1'),
      });
      expect(request.body).toMatchObject({
        tool_choice: { type: 'function', function: { name: 'get_weather' } },
      });
    },
  },
});

describe('mistral body', () => {
  it("uses Mistral's names: random_seed, max_tokens and tool_choice any", () => {
    const body = convertToMistralBody(
      {
        model,
        messages: [],
        seed: 7,
        max_completion_tokens: 9,
        tool_choice: 'required',
        user: 'u1',
        safe_prompt: true,
      },
      'chat',
    );
    expect(body).toEqual({
      model,
      messages: [],
      random_seed: 7,
      max_tokens: 9,
      tool_choice: 'any',
      safe_prompt: true,
    });
  });

  it('maps foreign tool call ids to nine letters and digits, and keeps its own', () => {
    expect(toMistralToolCallId('call_1')).toMatch(/^[a-zA-Z0-9]{9}$/);
    expect(toMistralToolCallId('call_1')).toBe(toMistralToolCallId('call_1'));
    expect(toMistralToolCallId('D681PevKs')).toBe('D681PevKs');
  });

  it('drops the name of user messages and turns developer into system', () => {
    const body = convertToMistralBody(
      {
        messages: [
          { role: 'developer', content: 'Be brief.' },
          { role: 'user', content: 'Hi', name: 'ann' },
        ],
      },
      'chat',
    );
    expect(body['messages']).toEqual([
      PROVIDER_CONTRACT_INPUTS.chat.messages[0],
      { role: 'user', content: 'Hi' },
    ]);
  });

  it('reads validation errors as one line', () => {
    const body = {
      object: 'error',
      message: {
        detail: [{ type: 'extra_forbidden', loc: ['body', 'user'], msg: 'Extra inputs are not permitted' }],
      },
      type: 'invalid_request_error',
    };
    expect(readMistralErrorMessage(body)).toBe('Extra inputs are not permitted (body.user)');
  });
});
