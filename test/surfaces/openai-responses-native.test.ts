// OpenAI's Responses API in, OpenAI out (issue 10), in both modes: a Responses request served by OpenAI is sent
// to OpenAI's own Responses API as the caller sent it (Codex's custom and built-in tools, reasoning, prompt
// caching, stored conversations), and its answer, whole or streamed, comes back as OpenAI sent it. Served by
// another provider it is translated, and what only OpenAI can run is a 400 naming it. `/v1/responses` and
// `/v1/embeddings` are served by every provider that can serve them.
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

/** A turn as Codex sends one: function, custom and built-in tools, reasoning, caching, no storage. */
function codexTurn(model: string) {
  return {
    model,
    instructions: 'You are Codex.',
    input: [
      { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Fix the bug.' }] },
      { type: 'reasoning', id: 'rs_1', summary: [], encrypted_content: 'gAAAAB…' },
      { type: 'custom_tool_call', call_id: 'call_p', name: 'apply_patch', input: '*** Begin Patch' },
      { type: 'custom_tool_call_output', call_id: 'call_p', output: 'Done' },
    ],
    tools: [
      {
        type: 'function',
        name: 'shell',
        description: 'Runs a command',
        parameters: { type: 'object', properties: { command: { type: 'array', items: { type: 'string' } } } },
        strict: false,
      },
      { type: 'custom', name: 'apply_patch', description: 'Edits files', format: { type: 'grammar' } },
      { type: 'web_search' },
    ],
    tool_choice: 'auto',
    parallel_tool_calls: false,
    reasoning: { effort: 'medium', summary: 'auto' },
    store: false,
    include: ['reasoning.encrypted_content'],
    prompt_cache_key: 'session-1234',
    text: { verbosity: 'low' },
  };
}

const RESPONSE = {
  id: 'resp_native_01',
  object: 'response',
  created_at: 1_760_000_000,
  status: 'completed',
  model: 'gpt-5-codex',
  output: [
    { id: 'rs_2', type: 'reasoning', summary: [{ type: 'summary_text', text: 'Looked at it.' }] },
    {
      id: 'msg_1',
      type: 'message',
      role: 'assistant',
      status: 'completed',
      content: [{ type: 'output_text', text: 'Fixed.', annotations: [] }],
    },
  ],
  usage: {
    input_tokens: 2_000,
    input_tokens_details: { cached_tokens: 1_800 },
    output_tokens: 40,
    output_tokens_details: { reasoning_tokens: 30 },
    total_tokens: 2_040,
  },
  reasoning: { effort: 'medium', summary: 'auto' },
  store: false,
};

const event = (data: { type: string } & Record<string, unknown>) =>
  `event: ${data.type}\ndata: ${JSON.stringify(data)}\n\n`;

const RESPONSE_STREAM = [
  event({
    type: 'response.created',
    sequence_number: 0,
    response: { ...RESPONSE, status: 'in_progress', output: [] },
  }),
  event({
    type: 'response.reasoning_summary_text.delta',
    sequence_number: 1,
    item_id: 'rs_2',
    output_index: 0,
    summary_index: 0,
    delta: 'Looked at it.',
  }),
  event({
    type: 'response.output_item.added',
    sequence_number: 2,
    output_index: 1,
    item: { id: 'ctc_1', type: 'custom_tool_call', call_id: 'call_q', name: 'apply_patch', input: '' },
  }),
  event({
    type: 'response.custom_tool_call_input.delta',
    sequence_number: 3,
    output_index: 1,
    delta: '*** Begin',
  }),
  event({
    type: 'response.output_text.delta',
    sequence_number: 4,
    output_index: 2,
    content_index: 0,
    delta: 'Fixed.',
  }),
  event({ type: 'response.completed', sequence_number: 5, response: RESPONSE }),
];

describe.each(MODES)('/openai responses: OpenAI served as it came (%s)', (_mode, start) => {
  let fakes: SurfaceFakes;
  let gateway: LaunchedGateway;
  const send = (path: string, body: unknown) =>
    postForText(`${gateway.url}${path}`, body, { authorization: `Bearer ${VIRTUAL_KEY}` });

  beforeAll(async () => {
    fakes = await startFakes();
    gateway = await start(surfaceConfig(fakes));
  });
  afterAll(async () => {
    await gateway?.close();
    await closeFakes(fakes);
  });

  it.each(['/openai/v1/responses', '/v1/responses'])(
    '%s: sends OpenAI’s Responses API the request as it came, and answers what it answered',
    async (path) => {
      fakes.openai.enqueue({ json: RESPONSE });
      const turn = codexTurn('gpt-5-codex');
      const answer = await send(path, turn);
      expect(answer.status).toBe(200);
      expect(answer.body).toEqual(RESPONSE);
      const sent = fakes.openai.last();
      expect(sent.path).toBe('/v1/responses');
      expect(sent.body).toEqual({ ...turn, stream: false });
      expect(sent.headers.authorization).toBe(`Bearer ${PROVIDER_KEYS.openai}`);
    },
  );

  it('relays a Responses stream event by event, custom tool calls and reasoning summaries included', async () => {
    fakes.openai.enqueue({ sse: RESPONSE_STREAM });
    const answer = await send('/openai/v1/responses', { ...codexTurn('openai/gpt-5-codex'), stream: true });
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-type')).toContain('text/event-stream');
    expect(answer.text).toBe(RESPONSE_STREAM.join(''));
    expect(fakes.openai.last().body).toMatchObject({ model: 'gpt-5-codex', stream: true });
  });

  it('keeps a stored conversation for OpenAI, and refuses it for a provider that cannot have it', async () => {
    fakes.openai.enqueue({ json: RESPONSE });
    const followUp = { model: 'gpt-5-codex', input: 'And now?', previous_response_id: 'resp_native_01' };
    expect((await send('/openai/v1/responses', followUp)).status).toBe(200);
    expect(fakes.openai.last().body).toMatchObject({ previous_response_id: 'resp_native_01' });

    const before = fakes.anthropic.requests.length;
    const refused = await send('/openai/v1/responses', { ...followUp, model: 'anthropic/claude-opus-4-7' });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatchObject({ type: 'invalid_request', param: 'previous_response_id' });
    expect(fakes.anthropic.requests.length).toBe(before);
  });

  it('refuses OpenAI’s own tools for another provider with a 400 naming the first, and sends nothing', async () => {
    const before = fakes.anthropic.requests.length;
    const refused = await send('/v1/responses', codexTurn('anthropic/claude-opus-4-7'));
    expect(refused.status).toBe(400);
    expect(refused.body.error.message).toContain(
      "tools[1]: a tool of type 'custom' cannot be translated to another format",
    );
    expect(fakes.anthropic.requests.length).toBe(before);
  });

  it('/v1/responses translates for another provider: function tools, the answer as a Response', async () => {
    const { tools } = codexTurn('');
    const answer = await send('/v1/responses', {
      model: 'anthropic/claude-opus-4-7',
      input: 'Say hello',
      tools: [tools[0]],
      reasoning: { effort: 'low' },
    });
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({
      object: 'response',
      status: 'completed',
      output: [{ type: 'message', content: [{ type: 'output_text', text: 'Hello from Claude' }] }],
    });
    expect(fakes.anthropic.last().body).toMatchObject({
      model: 'claude-opus-4-7',
      messages: [{ role: 'user', content: [{ type: 'text', text: 'Say hello' }] }],
      tools: [{ name: 'shell' }],
    });
  });

  it('carries a JSON schema text format to Anthropic as its structured output', async () => {
    const schema = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] };
    const answer = await send('/v1/responses', {
      model: 'anthropic/claude-opus-4-7',
      input: 'Where is the Louvre?',
      text: { format: { type: 'json_schema', name: 'place', schema, strict: true } },
    });
    expect(answer.status).toBe(200);
    expect(fakes.anthropic.last().body).toMatchObject({
      output_config: { format: { type: 'json_schema', schema } },
    });
  });

  it('/v1/embeddings is served by any provider with embeddings', async () => {
    const answer = await send('/v1/embeddings', { model: 'gemini/text-embedding-004', input: ['a', 'b'] });
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({
      object: 'list',
      data: [
        { object: 'embedding', index: 0 },
        { object: 'embedding', index: 1 },
      ],
    });
    expect(fakes.gemini.last().path).toContain('text-embedding-004:batchEmbedContents');
  });
});
