/**
 * Test fixtures: answers in Anthropic's true wire format (Messages API, anthropic-version 2023-06-01), as
 * the API sends them, shared by the contract test and the unit tests of this folder.
 */

/** One server-sent event as Anthropic frames it: an `event:` line naming the payload's type, then `data:`. */
export function sseEvent(data: { type: string } & Record<string, unknown>): string {
  return `event: ${data.type}\ndata: ${JSON.stringify(data)}\n\n`;
}

const MODEL = 'claude-sonnet-4-5-20250929';

export const chatAnswer = {
  id: 'msg_01XFDUDYJgAACzvnptvVoYEL',
  type: 'message',
  role: 'assistant',
  model: MODEL,
  content: [{ type: 'text', text: 'Hello there' }],
  stop_reason: 'end_turn',
  stop_sequence: null,
  usage: {
    input_tokens: 8,
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: 2,
    output_tokens: 5,
    service_tier: 'standard',
  },
};

export const toolAnswer = {
  id: 'msg_01Aq9w938a90dw8q',
  type: 'message',
  role: 'assistant',
  model: MODEL,
  content: [
    { type: 'tool_use', id: 'toolu_01A09q90qw90lq917835lq9', name: 'get_weather', input: { city: 'Paris' } },
  ],
  stop_reason: 'tool_use',
  stop_sequence: null,
  usage: { input_tokens: 20, output_tokens: 8 },
};

export const errorAnswer = {
  type: 'error',
  error: { type: 'invalid_request_error', message: 'bad things happened' },
  request_id: 'req_011CSHoEeqs5C35K2UUqR7Fy',
};

const messageStart = (usage: Record<string, number>) =>
  sseEvent({
    type: 'message_start',
    message: {
      id: 'msg_014p7gG3wDgGV9EUtLvnow3U',
      type: 'message',
      role: 'assistant',
      model: MODEL,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage,
    },
  });

/** Text 'Hello thére' in the pieces 'Hel', 'lo th', 'ére', usage 10/5. */
export const chatStreamEvents = [
  messageStart({
    input_tokens: 10,
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: 0,
    output_tokens: 1,
  }),
  sseEvent({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }),
  sseEvent({ type: 'ping' }),
  sseEvent({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Hel' } }),
  sseEvent({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'lo th' } }),
  sseEvent({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'ére' } }),
  sseEvent({ type: 'content_block_stop', index: 0 }),
  sseEvent({
    type: 'message_delta',
    delta: { stop_reason: 'end_turn', stop_sequence: null },
    usage: { output_tokens: 5 },
  }),
  sseEvent({ type: 'message_stop' }),
];

/** A text block, then a get_weather call (content block 1) whose input arrives in fragments. */
export const chatStreamToolEvents = [
  messageStart({ input_tokens: 20, output_tokens: 1 }),
  sseEvent({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }),
  sseEvent({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Checking.' } }),
  sseEvent({ type: 'content_block_stop', index: 0 }),
  sseEvent({
    type: 'content_block_start',
    index: 1,
    content_block: { type: 'tool_use', id: 'toolu_01T1x1fJ34qAmk2tNTrN7Up6', name: 'get_weather', input: {} },
  }),
  sseEvent({ type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: '' } }),
  sseEvent({
    type: 'content_block_delta',
    index: 1,
    delta: { type: 'input_json_delta', partial_json: '{"city": ' },
  }),
  sseEvent({
    type: 'content_block_delta',
    index: 1,
    delta: { type: 'input_json_delta', partial_json: '"Paris"}' },
  }),
  sseEvent({ type: 'content_block_stop', index: 1 }),
  sseEvent({
    type: 'message_delta',
    delta: { stop_reason: 'tool_use', stop_sequence: null },
    usage: { output_tokens: 8 },
  }),
  sseEvent({ type: 'message_stop' }),
];
