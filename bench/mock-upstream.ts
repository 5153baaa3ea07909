// A fast mock upstream for the benchmark, OpenAI's chat completions and Responses API and Anthropic's Messages
// API: plain node:http, precomputed answers, no artificial delays.
// Run as its own process: `node bench/mock-upstream.ts [port]` (or MOCK_PORT); prints {"port":N} when ready.
//   MOCK_STREAM_CHUNKS  content chunks per streamed answer (default 5)
//   MOCK_API_KEY        the key it requires (OpenAI's bearer, Anthropic's x-api-key; default sk-bench); a
//                       wrong key gets 401
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

const MODEL = 'gpt-4o-mini';
const CREATED = 1_700_000_000;
const chunkCount = Number(process.env['MOCK_STREAM_CHUNKS'] ?? 5);
if (!Number.isInteger(chunkCount) || chunkCount < 1 || chunkCount > 10_000) {
  throw new Error(
    `MOCK_STREAM_CHUNKS: '${process.env['MOCK_STREAM_CHUNKS']}' is not a chunk count (1-10000)`,
  );
}
const expectedAuthorization = `Bearer ${process.env['MOCK_API_KEY'] ?? 'sk-bench'}`;
const usage = { prompt_tokens: 9, completion_tokens: chunkCount, total_tokens: 9 + chunkCount };

const completionBody = Buffer.from(
  JSON.stringify({
    id: 'chatcmpl-bench',
    object: 'chat.completion',
    created: CREATED,
    model: MODEL,
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content: 'Hello! How can I help you today?', refusal: null },
        logprobs: null,
        finish_reason: 'stop',
      },
    ],
    usage: { prompt_tokens: 9, completion_tokens: 9, total_tokens: 18 },
  }),
);

const event = (data: unknown) => Buffer.from(`data: ${JSON.stringify(data)}\n\n`);
const streamChunk = (delta: Record<string, unknown>, finishReason: string | null) =>
  event({
    id: 'chatcmpl-bench',
    object: 'chat.completion.chunk',
    created: CREATED,
    model: MODEL,
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
  });
/** The whole stream as separate events: N content chunks (the last one finishes), a usage chunk, [DONE]. */
const streamEvents: Buffer[] = [];
for (let index = 0; index < chunkCount; index++) {
  const delta: Record<string, unknown> = index === 0 ? { role: 'assistant' } : {};
  delta['content'] = `tok${index} `;
  streamEvents.push(streamChunk(delta, index === chunkCount - 1 ? 'stop' : null));
}
streamEvents.push(
  event({
    id: 'chatcmpl-bench',
    object: 'chat.completion.chunk',
    created: CREATED,
    model: MODEL,
    choices: [],
    usage,
  }),
);
streamEvents.push(Buffer.from('data: [DONE]\n\n'));
const streamHeaders = {
  'content-type': 'text/event-stream',
  'cache-control': 'no-cache',
};

/** Anthropic's Messages answers, whole and streamed (N text deltas), for model claude-bench. */
const ANTHROPIC_MODEL = 'claude-bench';
const anthropicUsage = { input_tokens: 9, output_tokens: chunkCount };
const messageBody = Buffer.from(
  JSON.stringify({
    id: 'msg_bench',
    type: 'message',
    role: 'assistant',
    model: ANTHROPIC_MODEL,
    content: [{ type: 'text', text: 'Hello! How can I help you today?' }],
    stop_reason: 'end_turn',
    stop_sequence: null,
    usage: anthropicUsage,
  }),
);
const namedEvent = (data: { type: string } & Record<string, unknown>) =>
  Buffer.from(`event: ${data.type}\ndata: ${JSON.stringify(data)}\n\n`);
const messageEvents: Buffer[] = [
  namedEvent({
    type: 'message_start',
    message: {
      id: 'msg_bench',
      type: 'message',
      role: 'assistant',
      model: ANTHROPIC_MODEL,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { input_tokens: 9, output_tokens: 1 },
    },
  }),
  namedEvent({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }),
];
for (let index = 0; index < chunkCount; index++) {
  messageEvents.push(
    namedEvent({
      type: 'content_block_delta',
      index: 0,
      delta: { type: 'text_delta', text: `tok${index} ` },
    }),
  );
}
messageEvents.push(
  namedEvent({ type: 'content_block_stop', index: 0 }),
  namedEvent({
    type: 'message_delta',
    delta: { stop_reason: 'end_turn', stop_sequence: null },
    usage: { output_tokens: chunkCount },
  }),
  namedEvent({ type: 'message_stop' }),
);

/** OpenAI's Responses answers, whole and streamed (N text deltas), for the chat model. */
const responseUsage = {
  input_tokens: 9,
  input_tokens_details: { cached_tokens: 0 },
  output_tokens: chunkCount,
  output_tokens_details: { reasoning_tokens: 0 },
  total_tokens: 9 + chunkCount,
};
const responseMessage = {
  id: 'msg_bench',
  type: 'message',
  role: 'assistant',
  status: 'completed',
  content: [{ type: 'output_text', text: 'Hello! How can I help you today?', annotations: [] }],
};
const responseDone = {
  id: 'resp_bench',
  object: 'response',
  created_at: CREATED,
  status: 'completed',
  model: MODEL,
  output: [responseMessage],
  usage: responseUsage,
};
const responseBody = Buffer.from(JSON.stringify(responseDone));
const responseEvents: Buffer[] = [
  namedEvent({ type: 'response.created', response: { ...responseDone, status: 'in_progress', output: [] } }),
  namedEvent({
    type: 'response.output_item.added',
    output_index: 0,
    item: { ...responseMessage, status: 'in_progress', content: [] },
  }),
];
for (let index = 0; index < chunkCount; index++) {
  responseEvents.push(
    namedEvent({
      type: 'response.output_text.delta',
      output_index: 0,
      content_index: 0,
      delta: `tok${index} `,
    }),
  );
}
responseEvents.push(
  namedEvent({ type: 'response.output_item.done', output_index: 0, item: responseMessage }),
  namedEvent({ type: 'response.completed', response: responseDone }),
);

const stats = { requests: 0, streams: 0, rejected: 0, traceExports: 0, traceBytes: 0 };

function reject(response: ServerResponse, status: number, message: string): void {
  stats.rejected++;
  const body = Buffer.from(JSON.stringify({ error: { message, type: 'invalid_request_error' } }));
  response.writeHead(status, { 'content-type': 'application/json', 'content-length': String(body.length) });
  response.end(body);
}

function answer(request: IncomingMessage, response: ServerResponse, raw: Buffer): void {
  if (request.method === 'GET' && request.url === '/__stats') {
    const body = Buffer.from(JSON.stringify(stats));
    response.writeHead(200, { 'content-type': 'application/json', 'content-length': String(body.length) });
    response.end(body);
    return;
  }
  // The OTLP/HTTP collector of a run with BENCH_TRACING: export requests are counted and their bodies dropped.
  if (request.method === 'POST' && request.url === '/v1/traces') {
    stats.traceExports++;
    stats.traceBytes += raw.length;
    response.writeHead(200, { 'content-type': 'application/json', 'content-length': '2' });
    response.end('{}');
    return;
  }
  const anthropic = request.url === '/v1/messages';
  const responses = request.url === '/v1/responses';
  if (request.method !== 'POST' || (request.url !== '/v1/chat/completions' && !anthropic && !responses)) {
    reject(response, 404, `no route ${request.method} ${request.url}`);
    return;
  }
  stats.requests++;
  const key = anthropic ? `Bearer ${request.headers['x-api-key']}` : request.headers.authorization;
  if (key !== expectedAuthorization) {
    reject(response, 401, 'Incorrect API key provided');
    return;
  }
  let body: { model?: unknown; stream?: unknown };
  try {
    body = JSON.parse(raw.toString('utf8'));
  } catch {
    reject(response, 400, 'body is not JSON');
    return;
  }
  if (body.model !== (anthropic ? ANTHROPIC_MODEL : MODEL)) {
    reject(response, 404, `The model '${String(body.model)}' does not exist`);
    return;
  }
  if (body.stream === true) {
    stats.streams++;
    const events = anthropic ? messageEvents : responses ? responseEvents : streamEvents;
    response.writeHead(200, streamHeaders);
    for (let index = 0; index < events.length - 1; index++) response.write(events[index]);
    response.end(events[events.length - 1]);
    return;
  }
  const whole = anthropic ? messageBody : responses ? responseBody : completionBody;
  response.writeHead(200, { 'content-type': 'application/json', 'content-length': String(whole.length) });
  response.end(whole);
}

const server = createServer((request, response) => {
  const chunks: Buffer[] = [];
  request.on('data', (chunk: Buffer) => chunks.push(chunk));
  request.on('end', () => {
    answer(request, response, chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks));
  });
});
server.keepAliveTimeout = 60_000;
server.headersTimeout = 65_000;

const port = Number(process.argv[2] ?? process.env['MOCK_PORT'] ?? 0);
server.listen(port, '127.0.0.1', () => {
  process.stdout.write(
    `${JSON.stringify({ port: (server.address() as AddressInfo).port, pid: process.pid })}\n`,
  );
});

const stop = () => {
  server.close(() => process.exit(0));
  server.closeIdleConnections();
  setTimeout(() => process.exit(0), 2_000).unref();
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
