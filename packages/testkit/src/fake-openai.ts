import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: unknown;
}

/** A scripted answer: a JSON body, or SSE events written one by one with a pause between them. */
export type ScriptedAnswer =
  | { status?: number; json: unknown; headers?: Record<string, string> }
  | { status?: number; events: string[]; delayMs?: number; hangAfter?: boolean }
  | { destroy: true }
  | { delayMs: number; json: unknown };

/**
 * A fake OpenAI upstream on loopback that speaks the real wire format: it records every request (so tests
 * assert what gw sent) and answers scripted responses in order, or a default echo answer.
 */
export async function startFakeOpenAi() {
  const requests: RecordedRequest[] = [];
  const script: ScriptedAnswer[] = [];
  let aborted = 0;

  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      let body: unknown = text;
      try {
        body = text ? JSON.parse(text) : undefined;
      } catch {}
      requests.push({
        method: request.method ?? '',
        path: request.url ?? '',
        headers: request.headers,
        body,
      });
      response.on('close', () => {
        if (!response.writableFinished) aborted++;
      });
      const answer = script.shift() ?? defaultAnswer(request.url ?? '', body as Record<string, unknown>);
      void write(response, answer);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    url,
    requests,
    /** Answers of the next requests, in order. */
    enqueue(...answers: ScriptedAnswer[]) {
      script.push(...answers);
    },
    /** Responses whose client went away before they ended (cancelled upstream calls). */
    get abortedCount() {
      return aborted;
    },
    last(): RecordedRequest {
      const request = requests[requests.length - 1];
      if (!request) throw new Error('the fake upstream received no request');
      return request;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export type FakeOpenAi = Awaited<ReturnType<typeof startFakeOpenAi>>;

async function write(response: ServerResponse, answer: ScriptedAnswer): Promise<void> {
  if ('destroy' in answer) {
    response.socket?.destroy();
    return;
  }
  if ('events' in answer) {
    response.writeHead(answer.status ?? 200, { 'content-type': 'text/event-stream' });
    for (const event of answer.events) {
      if (response.destroyed) return;
      response.write(`data: ${event}\n\n`);
      if (answer.delayMs) await new Promise((resolve) => setTimeout(resolve, answer.delayMs));
    }
    if (!answer.hangAfter) response.end();
    return;
  }
  if ('delayMs' in answer) await new Promise((resolve) => setTimeout(resolve, answer.delayMs));
  const payload = JSON.stringify(answer.json);
  const status = 'status' in answer ? (answer.status ?? 200) : 200;
  const headers = 'headers' in answer ? answer.headers : {};
  response.writeHead(status, { 'content-type': 'application/json', ...headers });
  response.end(payload);
}

export function chatCompletion(
  options: { content?: string | null; model?: string; toolCalls?: unknown[]; finishReason?: string } = {},
) {
  return {
    id: 'chatcmpl-fake-1',
    object: 'chat.completion',
    created: 1_700_000_000,
    model: options.model ?? 'gpt-4o-mini',
    system_fingerprint: 'fp_fake',
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: options.content === undefined ? 'Hello from the fake upstream' : options.content,
          ...(options.toolCalls ? { tool_calls: options.toolCalls } : {}),
          refusal: null,
        },
        logprobs: null,
        finish_reason: options.finishReason ?? (options.toolCalls ? 'tool_calls' : 'stop'),
      },
    ],
    usage: {
      prompt_tokens: 11,
      completion_tokens: 7,
      total_tokens: 18,
      prompt_tokens_details: { cached_tokens: 2 },
    },
  };
}

/** The chunks OpenAI streams for a short answer, with `include_usage`: role, content pieces, finish, usage. */
export function chatStreamEvents(options: { pieces?: string[]; model?: string } = {}): string[] {
  const base = {
    id: 'chatcmpl-fake-2',
    object: 'chat.completion.chunk',
    created: 1_700_000_000,
    model: options.model ?? 'gpt-4o-mini',
  };
  const pieces = options.pieces ?? ['Hel', 'lo', ' wörld'];
  return [
    JSON.stringify({
      ...base,
      choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }],
      usage: null,
    }),
    ...pieces.map((piece) =>
      JSON.stringify({
        ...base,
        choices: [{ index: 0, delta: { content: piece }, finish_reason: null }],
        usage: null,
      }),
    ),
    JSON.stringify({ ...base, choices: [{ index: 0, delta: {}, finish_reason: 'stop' }], usage: null }),
    JSON.stringify({
      ...base,
      choices: [],
      usage: { prompt_tokens: 9, completion_tokens: 3, total_tokens: 12 },
    }),
    '[DONE]',
  ];
}

function defaultAnswer(path: string, body: Record<string, unknown> | undefined): ScriptedAnswer {
  const model = typeof body?.['model'] === 'string' ? body['model'] : 'gpt-4o-mini';
  if (path.endsWith('/completions') && !path.endsWith('/chat/completions')) {
    if (body?.['stream']) {
      const base = { id: 'cmpl-fake', object: 'text_completion', created: 1_700_000_000, model };
      return {
        events: [
          JSON.stringify({ ...base, choices: [{ index: 0, text: 'Once', finish_reason: null }] }),
          JSON.stringify({ ...base, choices: [{ index: 0, text: ' upon', finish_reason: 'stop' }] }),
          JSON.stringify({
            ...base,
            choices: [],
            usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 },
          }),
          '[DONE]',
        ],
      };
    }
    return {
      json: {
        id: 'cmpl-fake',
        object: 'text_completion',
        created: 1_700_000_000,
        model,
        choices: [{ index: 0, text: 'Once upon a time', finish_reason: 'stop', logprobs: null }],
        usage: { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 },
      },
    };
  }
  if (body?.['stream']) return { events: chatStreamEvents({ model }) };
  return { json: chatCompletion({ model }) };
}

/**
 * The chunks OpenAI streams for one tool call whose arguments arrive in `fragments` (the first rides on
 * the delta that opens the call), optionally after some text, then the finish and usage chunks.
 */
export function toolCallStreamEvents(options: {
  id?: string;
  model?: string;
  text?: string;
  callId: string;
  name: string;
  fragments: string[];
  usage?: { prompt_tokens: number; completion_tokens: number; total_tokens: number };
}): string[] {
  const base = {
    id: options.id ?? 'chatcmpl-tools',
    object: 'chat.completion.chunk',
    created: 1_700_000_000,
    model: options.model ?? 'gpt-4o-mini',
  };
  const chunk = (delta: unknown, finish: string | null = null) =>
    JSON.stringify({ ...base, choices: [{ index: 0, delta, finish_reason: finish }] });
  const [first = '', ...rest] = options.fragments;
  const opening = {
    index: 0,
    id: options.callId,
    type: 'function',
    function: { name: options.name, arguments: first },
  };
  return [
    ...(options.text !== undefined ? [chunk({ role: 'assistant', content: options.text })] : []),
    chunk({ ...(options.text === undefined ? { role: 'assistant' } : {}), tool_calls: [opening] }),
    ...rest.map((fragment) => chunk({ tool_calls: [{ index: 0, function: { arguments: fragment } }] })),
    chunk({}, 'tool_calls'),
    ...(options.usage ? [JSON.stringify({ ...base, choices: [], usage: options.usage })] : []),
    '[DONE]',
  ];
}
