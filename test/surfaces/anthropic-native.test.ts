// Anthropic in, Anthropic out (issue 10, same-format fidelity), in both modes: a Messages request served by a
// provider of Anthropic's format reaches it as the caller sent it (only the model and the key changed), and its
// answer, whole or streamed, comes back as the provider sent it. The same request served by another provider
// is translated (system turns anywhere, images inside tool results), and what cannot be translated is a 400.
import type { LaunchedGateway } from '@gw/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postForText } from '../support/http.ts';
import {
  closeFakes,
  MODES,
  PROVIDER_KEYS,
  type SurfaceFakes,
  startFakes,
  surfaceConfig,
  VIRTUAL_KEY,
} from './surface-gateway.ts';

const IMAGE = { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' };

/** A turn as Claude Code sends one: cache markers, thinking with its signature, a system turn mid-way. */
function claudeCodeTurn(model: string) {
  return {
    model,
    max_tokens: 32_000,
    system: [
      { type: 'text', text: 'You are Claude Code.', cache_control: { type: 'ephemeral' } },
      { type: 'text', text: 'Be brief.' },
    ],
    messages: [
      { role: 'user', content: [{ type: 'text', text: 'What is in shot.png?' }] },
      {
        role: 'assistant',
        content: [
          { type: 'thinking', thinking: 'I should read the file.', signature: 'EqQBCkYIBxgCKkD…sig' },
          { type: 'tool_use', id: 'toolu_01', name: 'Read', input: { file_path: 'shot.png' } },
        ],
      },
      {
        role: 'user',
        content: [
          {
            type: 'tool_result',
            tool_use_id: 'toolu_01',
            content: [
              { type: 'text', text: 'shot.png' },
              { type: 'image', source: IMAGE },
            ],
          },
          { type: 'text', text: 'Describe it.', cache_control: { type: 'ephemeral', ttl: '1h' } },
        ],
      },
      { role: 'system', content: 'The user can see the image too.' },
      {
        role: 'user',
        content: [{ type: 'tool_result', tool_use_id: 'toolu_02', content: 'denied', is_error: true }],
      },
    ],
    tools: [
      {
        name: 'Read',
        description: 'Reads a file',
        input_schema: { type: 'object', properties: { file_path: { type: 'string' } } },
        cache_control: { type: 'ephemeral' },
      },
    ],
    thinking: { type: 'enabled', budget_tokens: 31_999 },
    context_management: { edits: [{ type: 'clear_thinking_20251015' }] },
    output_config: { effort: 'high' },
    metadata: { user_id: 'user_abc' },
    a_member_gw_does_not_know: { kept: true },
  };
}

const THINKING_ANSWER = {
  id: 'msg_native_01',
  type: 'message',
  role: 'assistant',
  model: 'claude-sonnet-4-5',
  content: [
    { type: 'thinking', thinking: 'A chart.', signature: 'ErUBCkYIBxgC…answer' },
    { type: 'text', text: 'A bar chart.' },
  ],
  stop_reason: 'end_turn',
  stop_sequence: null,
  usage: {
    input_tokens: 30,
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: 29_000,
    output_tokens: 12,
    service_tier: 'standard',
  },
  container: null,
};

const event = (data: { type: string } & Record<string, unknown>) =>
  `event: ${data.type}\ndata: ${JSON.stringify(data)}\n\n`;

const THINKING_STREAM = [
  event({
    type: 'message_start',
    message: {
      ...THINKING_ANSWER,
      content: [],
      stop_reason: null,
      usage: { input_tokens: 30, output_tokens: 1 },
    },
  }),
  event({
    type: 'content_block_start',
    index: 0,
    content_block: { type: 'thinking', thinking: '', signature: '' },
  }),
  event({ type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'A chart.' } }),
  event({ type: 'content_block_delta', index: 0, delta: { type: 'signature_delta', signature: 'ErUB…' } }),
  event({ type: 'content_block_stop', index: 0 }),
  event({ type: 'ping' }),
  event({ type: 'an_event_gw_does_not_know', detail: 1 }),
  event({ type: 'content_block_start', index: 1, content_block: { type: 'text', text: '' } }),
  event({ type: 'content_block_delta', index: 1, delta: { type: 'text_delta', text: 'A bar chart.' } }),
  event({ type: 'content_block_stop', index: 1 }),
  event({
    type: 'message_delta',
    delta: { stop_reason: 'end_turn', stop_sequence: null },
    usage: { output_tokens: 12, cache_read_input_tokens: 29_000 },
  }),
  event({ type: 'message_stop' }),
];

describe.each(MODES)('/anthropic: same format forwarded as it came (%s)', (_mode, start) => {
  let fakes: SurfaceFakes;
  let gateway: LaunchedGateway;
  const messages = (body: unknown, headers: Record<string, string> = {}) =>
    postForText(`${gateway.url}/anthropic/v1/messages`, body, {
      'x-api-key': VIRTUAL_KEY,
      'anthropic-version': '2023-06-01',
      ...headers,
    });

  beforeAll(async () => {
    fakes = await startFakes();
    gateway = await start(surfaceConfig(fakes));
  });
  afterAll(async () => {
    await gateway?.close();
    await closeFakes(fakes);
  });

  it('sends Anthropic the request as it came, and answers what Anthropic answered', async () => {
    fakes.anthropic.enqueue({ json: THINKING_ANSWER });
    const turn = claudeCodeTurn('anthropic/claude-sonnet-4-5');
    const answer = await messages(turn, { 'anthropic-beta': 'interleaved-thinking-2025-05-14,context-1m' });
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual(THINKING_ANSWER);

    const sent = fakes.anthropic.last();
    expect(sent.path).toBe('/v1/messages');
    expect(sent.body).toEqual({ ...turn, model: 'claude-sonnet-4-5', stream: false });
    expect(sent.headers['anthropic-beta']).toBe('interleaved-thinking-2025-05-14,context-1m');
    expect(sent.headers['x-api-key']).toBe(PROVIDER_KEYS.anthropic);
    expect(JSON.stringify(sent.headers)).not.toContain(VIRTUAL_KEY);
  });

  it('relays a stream event by event as Anthropic framed it, thinking and unknown events included', async () => {
    fakes.anthropic.enqueue({ sse: THINKING_STREAM });
    const answer = await messages({ ...claudeCodeTurn('claude-sonnet-4-5'), stream: true });
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-type')).toContain('text/event-stream');
    expect(answer.text).toBe(THINKING_STREAM.join(''));
    expect(fakes.anthropic.last().body).toMatchObject({ model: 'claude-sonnet-4-5', stream: true });
  });

  it('relays Anthropic’s error answers in Anthropic’s shape, without its key', async () => {
    fakes.anthropic.enqueue({
      status: 400,
      json: {
        type: 'error',
        error: {
          type: 'invalid_request_error',
          message: `messages.1.content.0: invalid signature (key ${PROVIDER_KEYS.anthropic})`,
        },
      },
    });
    const answer = await messages(claudeCodeTurn('claude-sonnet-4-5'));
    expect(answer.status).toBe(400);
    expect(answer.body).toMatchObject({
      type: 'error',
      error: { type: 'invalid_request_error', message: expect.stringContaining('invalid signature') },
    });
    expect(answer.text).not.toContain(PROVIDER_KEYS.anthropic);
  });

  it('translates the same turn for another provider: system turns in place, tool-result images after it', async () => {
    const answer = await messages(claudeCodeTurn('openai/gpt-4o'));
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ type: 'message', role: 'assistant', content: [{ type: 'text' }] });
    expect((fakes.openai.last().body as { messages: unknown[] }).messages).toEqual([
      // Cache breakpoints are Anthropic's and Bedrock's: OpenAI gets the text parts without them.
      {
        role: 'system',
        content: [
          { type: 'text', text: 'You are Claude Code.' },
          { type: 'text', text: 'Be brief.' },
        ],
      },
      { role: 'user', content: [{ type: 'text', text: 'What is in shot.png?' }] },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          {
            type: 'function',
            id: 'toolu_01',
            function: { name: 'Read', arguments: '{"file_path":"shot.png"}' },
          },
        ],
      },
      { role: 'tool', tool_call_id: 'toolu_01', content: 'shot.png' },
      {
        role: 'user',
        content: [
          { type: 'image_url', image_url: { url: `data:${IMAGE.media_type};base64,${IMAGE.data}` } },
          { type: 'text', text: 'Describe it.' },
        ],
      },
      { role: 'system', content: 'The user can see the image too.' },
      { role: 'tool', tool_call_id: 'toolu_02', content: 'Error: denied' },
    ]);
  });

  it('refuses with a 400 what another provider cannot be given, and sends nothing', async () => {
    const before = fakes.openai.requests.length;
    const turn = claudeCodeTurn('openai/gpt-4o');
    turn.messages[0] = {
      role: 'user',
      content: [{ type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'x' } } as never],
    };
    const answer = await messages(turn);
    expect(answer.status).toBe(400);
    expect(answer.body).toMatchObject({
      type: 'error',
      error: {
        type: 'invalid_request_error',
        message: expect.stringContaining(
          "messages[0].content[0]: a content block of type 'document' cannot be translated",
        ),
      },
    });
    expect(fakes.openai.requests.length).toBe(before);

    // The same block goes to Anthropic as it came.
    fakes.anthropic.enqueue({ json: THINKING_ANSWER });
    const native = await messages({ ...turn, model: 'claude-sonnet-4-5' });
    expect(native.status).toBe(200);
    expect((fakes.anthropic.last().body as typeof turn).messages[0]).toEqual(turn.messages[0]);
  });
});
