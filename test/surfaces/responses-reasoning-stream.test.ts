// A Responses stream served by a provider that reasons (issue 27 item 6): Anthropic's thinking and Gemini's
// thoughts stream as OpenAI streams a reasoning summary (a `reasoning` output item, its summary part, the
// summary text's deltas and done), before the message item, and the completed response holds the item.
import type { LaunchedGateway } from '@gw/testkit';
import { scaled } from '@gw/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postForText } from '../support/http.ts';
import {
  closeFakes,
  MODES,
  type SurfaceFakes,
  startFakes,
  surfaceConfig,
  VIRTUAL_KEY,
} from './surface-gateway.ts';

const anthropicEvent = (data: { type: string } & Record<string, unknown>) =>
  `event: ${data.type}\ndata: ${JSON.stringify(data)}\n\n`;

const ANTHROPIC_THINKING = [
  anthropicEvent({
    type: 'message_start',
    message: {
      id: 'msg_r1',
      type: 'message',
      role: 'assistant',
      model: 'claude-opus-4-7',
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { input_tokens: 10, output_tokens: 1 },
    },
  }),
  anthropicEvent({
    type: 'content_block_start',
    index: 0,
    content_block: { type: 'thinking', thinking: '', signature: '' },
  }),
  anthropicEvent({
    type: 'content_block_delta',
    index: 0,
    delta: { type: 'thinking_delta', thinking: 'Greet ' },
  }),
  anthropicEvent({
    type: 'content_block_delta',
    index: 0,
    delta: { type: 'thinking_delta', thinking: 'back.' },
  }),
  anthropicEvent({
    type: 'content_block_delta',
    index: 0,
    delta: { type: 'signature_delta', signature: 'S' },
  }),
  anthropicEvent({ type: 'content_block_stop', index: 0 }),
  anthropicEvent({ type: 'content_block_start', index: 1, content_block: { type: 'text', text: '' } }),
  anthropicEvent({ type: 'content_block_delta', index: 1, delta: { type: 'text_delta', text: 'Hello.' } }),
  anthropicEvent({ type: 'content_block_stop', index: 1 }),
  anthropicEvent({
    type: 'message_delta',
    delta: { stop_reason: 'end_turn', stop_sequence: null },
    usage: { output_tokens: 7 },
  }),
  anthropicEvent({ type: 'message_stop' }),
];

const GEMINI_THOUGHTS = [
  { parts: [{ text: 'Greet ', thought: true }] },
  { parts: [{ text: 'back.', thought: true }] },
  { parts: [{ text: 'Hello.' }], finishReason: 'STOP' },
].map(
  ({ parts, finishReason }) =>
    `data: ${JSON.stringify({
      candidates: [
        { content: { role: 'model', parts }, index: 0, ...(finishReason ? { finishReason } : {}) },
      ],
      modelVersion: 'gemini-2.5-flash',
      ...(finishReason
        ? {
            usageMetadata: {
              promptTokenCount: 5,
              candidatesTokenCount: 2,
              thoughtsTokenCount: 4,
              totalTokenCount: 11,
            },
          }
        : {}),
    })}\n\n`,
);

/** The events of a Responses stream, as parsed `data:` payloads. */
function events(text: string): Array<{ type: string } & Record<string, unknown>> {
  return text
    .split('\n\n')
    .map((event) => event.split('\n').find((line) => line.startsWith('data: ')))
    .filter((line): line is string => line !== undefined)
    .map((line) => JSON.parse(line.slice('data: '.length)));
}

describe.each(MODES)(
  'Responses streams carry the provider’s reasoning as OpenAI streams it (%s)',
  (_mode, start) => {
    let fakes: SurfaceFakes;
    let gateway: LaunchedGateway;

    beforeAll(async () => {
      fakes = await startFakes();
      gateway = await start(surfaceConfig(fakes));
    }, scaled(60_000));
    afterAll(async () => {
      await gateway?.close();
      await closeFakes(fakes);
    });

    it.each([
      ['anthropic/claude-opus-4-7', () => fakes.anthropic.enqueue({ sse: ANTHROPIC_THINKING })],
      ['gemini/gemini-2.5-flash', () => fakes.gemini.enqueue({ sse: GEMINI_THOUGHTS })],
    ] as const)('served by %s', async (model, enqueue) => {
      enqueue();
      const answer = await postForText(
        `${gateway.url}/openai/v1/responses`,
        { model, input: 'Hi', stream: true, reasoning: { effort: 'low', summary: 'auto' } },
        { authorization: `Bearer ${VIRTUAL_KEY}` },
      );
      expect(answer.status).toBe(200);
      const stream = events(answer.text);
      expect(stream.map((event) => event.sequence_number)).toEqual(stream.map((_, index) => index));
      const types = stream.map((event) => event.type);
      expect(types).toEqual([
        'response.created',
        'response.in_progress',
        'response.output_item.added',
        'response.reasoning_summary_part.added',
        'response.reasoning_summary_text.delta',
        'response.reasoning_summary_text.delta',
        'response.reasoning_summary_text.done',
        'response.reasoning_summary_part.done',
        'response.output_item.done',
        'response.output_item.added',
        'response.content_part.added',
        'response.output_text.delta',
        'response.output_text.done',
        'response.content_part.done',
        'response.output_item.done',
        'response.completed',
      ]);
      const reasoningId = (stream[2]!['item'] as { id: string }).id;
      expect(stream[2]).toMatchObject({ output_index: 0, item: { type: 'reasoning', summary: [] } });
      expect(stream.filter((event) => event.type === 'response.reasoning_summary_text.delta')).toEqual([
        expect.objectContaining({ item_id: reasoningId, output_index: 0, summary_index: 0, delta: 'Greet ' }),
        expect.objectContaining({ item_id: reasoningId, output_index: 0, summary_index: 0, delta: 'back.' }),
      ]);
      expect(stream[6]).toMatchObject({ text: 'Greet back.' });
      expect(stream[9]).toMatchObject({ output_index: 1, item: { type: 'message' } });
      expect(stream[11]).toMatchObject({ output_index: 1, delta: 'Hello.' });
      const completed = stream.at(-1)!['response'] as { output: unknown[] };
      expect(completed.output).toMatchObject([
        { id: reasoningId, type: 'reasoning', summary: [{ type: 'summary_text', text: 'Greet back.' }] },
        { type: 'message', content: [{ type: 'output_text', text: 'Hello.' }] },
      ]);
    });
  },
);
