import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setImmediate as nextTick, setTimeout as sleep } from 'node:timers/promises';
import { type ChatCompletionChunk, GatewayError, type Message, networkConfigSchema } from '@gw/shared';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type {
  AdapterContext,
  ChatInput,
  EmbeddingsInput,
  ProviderAdapter,
  ResolvedKey,
  TextInput,
} from '../../../services/router/src/core/providers/adapter.ts';
import { UpstreamClient } from '../../../services/router/src/core/upstream-client.ts';

/** What the fake upstream received, as the adapter sent it. */
export interface RecordedUpstreamRequest {
  method: string;
  /** Path including the query string. */
  path: string;
  headers: IncomingHttpHeaders;
  /** The body parsed as JSON when it is JSON, else the raw bytes. */
  body: unknown;
  rawBody: Buffer;
}

/** A plain answer of the fake upstream; an object body is sent as JSON. */
export interface UpstreamAnswer {
  status?: number;
  headers?: Record<string, string>;
  body: string | Buffer | object;
}

/**
 * A streamed answer: the entries are concatenated and written in awkward small pieces (the incremental and
 * cancellation cases write the first entry whole first, so it must produce at least one normalised chunk).
 */
export interface UpstreamStreamAnswer {
  status?: number;
  /** Defaults to `content-type: text/event-stream`. */
  headers?: Record<string, string>;
  chunks: Array<string | Buffer>;
}

type Answer<Shape> = (request: RecordedUpstreamRequest) => Shape | Promise<Shape>;

/** The cases of the suite, by the name `skip` uses. */
export type ProviderContractCase =
  | 'capabilities'
  | 'chat'
  | 'chatTools'
  | 'vision'
  | 'chatStream'
  | 'chatStreamIncremental'
  | 'chatStreamTools'
  | 'chatStreamError'
  | 'error'
  | 'text'
  | 'textStream'
  | 'embeddings'
  | 'cancellation';

export interface ProviderContractOptions {
  /** Names the adapter in the describe title; also `context.provider`. */
  name: string;
  adapter: ProviderAdapter;
  model: string;
  /** The key handed to the adapter; leave it out to test keyless calls. */
  key?: ResolvedKey;
  /** The base URL given to the adapter, from the fake's URL (default: the fake's URL as is). */
  baseUrl?: (fakeUrl: string) => string;
  /** The provider's true wire-format answers, per scenario (see PROVIDER_CONTRACT_INPUTS for the inputs). */
  upstream: {
    /** Text 'Hello there', finish stop, usage 10 prompt / 5 completion. */
    chat: Answer<UpstreamAnswer>;
    /** One tool call get_weather with arguments {"city":"Paris"}, finish tool_calls, usage 20/8. */
    chatTools: Answer<UpstreamAnswer>;
    /** 'Hel', 'lo th', 'ére' (final text 'Hello thére'), finish stop, usage 10/5. */
    chatStream: Answer<UpstreamStreamAnswer>;
    /** A streamed get_weather call whose arguments arrive in >= 2 fragments, finish tool_calls. */
    chatStreamTools: Answer<UpstreamStreamAnswer>;
    /** The provider's real error body for a 400 with message 'bad things happened' (status defaults to 400). */
    error: Answer<UpstreamAnswer>;
    /** 'Once upon', finish stop, usage 3/2 (a chat answer for providers with textViaChat). */
    text?: Answer<UpstreamAnswer>;
    /**
     * A streamed text completion 'Once' + ' upon', finish stop, usage 3/2. Providers with textViaChat may
     * leave it out: their text stream then runs over `chatStream` and must give 'Hello thére'.
     */
    textStream?: Answer<UpstreamStreamAnswer>;
    /** Embeddings [0.1,0.2] and [0.3,0.4] for ['a','b'], usage prompt 2. */
    embeddings?: Answer<UpstreamAnswer>;
  };
  /** Assertions on what the adapter sent upstream, per scenario (use vitest's expect inside). */
  expectRequest: {
    chat: (request: RecordedUpstreamRequest) => void;
    chatTools: (request: RecordedUpstreamRequest) => void;
    vision?: (request: RecordedUpstreamRequest) => void;
    chatStream?: (request: RecordedUpstreamRequest) => void;
    text?: (request: RecordedUpstreamRequest) => void;
    textStream?: (request: RecordedUpstreamRequest) => void;
    embeddings?: (request: RecordedUpstreamRequest) => void;
  };
  /** Case → why this adapter does not run it. */
  skip?: Partial<Record<ProviderContractCase, string>>;
}

const WEATHER_TOOL = {
  type: 'function' as const,
  function: {
    name: 'get_weather',
    description: 'Current weather of a city',
    parameters: {
      type: 'object',
      properties: { city: { type: 'string' } },
      required: ['city'],
    },
  },
};

/** The inputs the suite sends, for adapters' expectRequest assertions. */
export const PROVIDER_CONTRACT_INPUTS = {
  chat: {
    messages: [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Hi' },
    ] satisfies Message[],
    params: { max_tokens: 50, temperature: 0.2, stop_sequences: ['END'] },
  },
  chatTools: {
    messages: [
      { role: 'user', content: 'Weather in Paris?' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          {
            id: 'call_1',
            type: 'function',
            function: { name: 'get_weather', arguments: '{"city":"Paris"}' },
          },
        ],
      },
      { role: 'tool', tool_call_id: 'call_1', content: '{"temp":21}' },
    ] satisfies Message[],
    params: {
      tools: [WEATHER_TOOL],
      tool_choice: { type: 'function', function: { name: 'get_weather' } },
    },
  },
  vision: {
    messages: [
      {
        role: 'user',
        content: [
          { type: 'text', text: 'What is this?' },
          { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=', detail: 'high' } },
          { type: 'image_url', image_url: { url: 'https://example.com/cat.png' } },
        ],
      },
    ] satisfies Message[],
    params: {},
  },
  text: { prompt: 'Once', params: { max_tokens: 5 } },
  embeddings: { input: ['a', 'b'], params: {} },
  weatherTool: WEATHER_TOOL,
};

/** How long a gradual stream waits for the adapter to deliver its first chunk. */
const GRADUAL_WAIT_MS = 2_000;
/** Pause after each entry of a gradual stream before the next one is written unasked. */
const ENTRY_PAUSE_MS = 250;
/** How fast an aborted stream must end, and the fake must see its response closed. */
const CANCEL_WAIT_MS = 2_000;
/** Piece sizes of split stream writes: small and uneven, so splits land inside characters, lines and frames. */
const PIECE_SIZES = [1, 3, 7, 2, 5, 4, 6];

type StreamMode =
  | { kind: 'split' }
  /**
   * Writes entry after entry, each whole, pausing after each until the test releases it (or a short pause
   * passes, for entries such as Azure's prompt-filter preamble that yield no chunk); once released, writes
   * the rest split, or hangs.
   */
  | {
      kind: 'gradual';
      release: Promise<void>;
      after: 'finish' | 'hang';
      onReleased: (early: boolean) => void;
    };

type Handler = (request: RecordedUpstreamRequest, response: ServerResponse) => Promise<void>;

interface FakeUpstream {
  url: string;
  requests: RecordedUpstreamRequest[];
  /** Resolves when a response is closed before it finished (the client went away). */
  abandoned: Promise<void>;
  setHandler(handler: Handler): void;
  close(): Promise<void>;
}

async function startFakeUpstream(): Promise<FakeUpstream> {
  const requests: RecordedUpstreamRequest[] = [];
  let handler: Handler | undefined;
  let markAbandoned: () => void = () => {};
  const fake: FakeUpstream = {
    url: '',
    requests,
    abandoned: Promise.resolve(),
    setHandler(next) {
      handler = next;
      requests.length = 0;
      fake.abandoned = new Promise((resolve) => {
        markAbandoned = resolve;
      });
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  const server: Server = createServer((request, response) => {
    const parts: Buffer[] = [];
    request.on('data', (part: Buffer) => parts.push(part));
    request.on('end', () => {
      const rawBody = Buffer.concat(parts);
      const recorded: RecordedUpstreamRequest = {
        method: request.method ?? '',
        path: request.url ?? '',
        headers: request.headers,
        body: parseJsonOr(rawBody),
        rawBody,
      };
      requests.push(recorded);
      response.on('close', () => {
        if (!response.writableFinished) markAbandoned();
      });
      if (!handler) {
        response.writeHead(500).end('no scenario set');
        return;
      }
      handler(recorded, response).catch((error: unknown) => {
        if (!response.headersSent) response.writeHead(500);
        response.end(String(error));
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  fake.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return fake;
}

function parseJsonOr(bytes: Buffer): unknown {
  if (bytes.length === 0) return undefined;
  try {
    return JSON.parse(bytes.toString('utf8'));
  } catch {
    return bytes;
  }
}

/** The JSON an answer carries, or undefined when its body is not JSON. */
function answerJson(answer: UpstreamAnswer): unknown {
  if (typeof answer.body === 'string' || Buffer.isBuffer(answer.body)) {
    const parsed = parseJsonOr(Buffer.from(answer.body));
    return Buffer.isBuffer(parsed) ? undefined : parsed;
  }
  return answer.body;
}

function writeAnswer(response: ServerResponse, answer: UpstreamAnswer, defaultStatus: number): void {
  const isRaw = typeof answer.body === 'string' || Buffer.isBuffer(answer.body);
  const payload = isRaw ? (answer.body as string | Buffer) : JSON.stringify(answer.body);
  const contentType = answerJson(answer) === undefined ? 'text/plain; charset=utf-8' : 'application/json';
  response.writeHead(answer.status ?? defaultStatus, { 'content-type': contentType, ...answer.headers });
  response.end(payload);
}

async function writePiece(response: ServerResponse, piece: Buffer): Promise<boolean> {
  if (response.destroyed) return false;
  if (!response.write(piece)) await Promise.race([once(response, 'drain'), once(response, 'close')]);
  // A tick between writes lets each piece leave as its own packet.
  await nextTick();
  return !response.destroyed;
}

async function writeSplit(response: ServerResponse, bytes: Buffer): Promise<boolean> {
  let offset = 0;
  for (let piece = 0; offset < bytes.length; piece++) {
    const size = PIECE_SIZES[piece % PIECE_SIZES.length]!;
    if (!(await writePiece(response, bytes.subarray(offset, offset + size)))) return false;
    offset += size;
  }
  return true;
}

async function writeStream(response: ServerResponse, answer: UpstreamStreamAnswer, mode: StreamMode) {
  response.socket?.setNoDelay(true);
  response.writeHead(answer.status ?? 200, {
    'content-type': 'text/event-stream',
    'cache-control': 'no-cache',
    ...answer.headers,
  });
  response.flushHeaders();
  const entries = answer.chunks.map((chunk) => Buffer.from(chunk));
  if (mode.kind === 'split') {
    if (await writeSplit(response, Buffer.concat(entries))) response.end();
    return;
  }
  let released = false;
  void mode.release.then(() => {
    released = true;
  });
  let written = 0;
  const deadline = Date.now() + GRADUAL_WAIT_MS;
  while (written < entries.length && !released) {
    if (!(await writePiece(response, entries[written]!))) return;
    written++;
    const pause = written === entries.length ? deadline - Date.now() : ENTRY_PAUSE_MS;
    await Promise.race([mode.release, sleep(Math.max(0, pause))]);
  }
  // Released while entries were still unwritten: the adapter delivered a chunk before the upstream ended.
  mode.onReleased(released && written < entries.length);
  if (mode.after === 'hang') return;
  if (await writeSplit(response, Buffer.concat(entries.slice(written)))) response.end();
}

async function collect<Item>(iterable: AsyncIterable<Item>): Promise<Item[]> {
  const items: Item[] = [];
  for await (const item of iterable) items.push(item);
  return items;
}

function expectUsage(
  usage: { prompt_tokens: number; completion_tokens: number; total_tokens: number } | null | undefined,
  prompt: number,
  completion: number,
): void {
  expect(usage).toMatchObject({
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
  });
}

async function expectUpstreamFailure(attempt: Promise<unknown>): Promise<void> {
  const error = await attempt.then(
    () => undefined,
    (failure: unknown) => failure,
  );
  expect(error, 'the adapter must reject').toBeInstanceOf(GatewayError);
  const gatewayError = error as GatewayError;
  expect(gatewayError.status).toBe(400);
  expect(gatewayError.upstream).toBe(true);
  expect(gatewayError.message).toContain('bad things happened');
}

const OPERATION_METHODS = {
  chat: 'chat',
  chat_stream: 'chatStream',
  text: 'text',
  text_stream: 'textStream',
  embeddings: 'embeddings',
} as const;

/**
 * The behaviour every provider adapter owes the router, against an in-process fake upstream that answers
 * the provider's true wire format. Each adapter runs it from a short test file with its own fixtures.
 */
export function runProviderContract(options: ProviderContractOptions): void {
  const { adapter, upstream, expectRequest } = options;
  const operations = new Set(adapter.capabilities.operations);
  const skip = options.skip ?? {};

  describe(`provider contract: ${options.name}`, () => {
    let fake: FakeUpstream;
    let http: UpstreamClient;
    let controller = new AbortController();

    beforeAll(async () => {
      fake = await startFakeUpstream();
      http = new UpstreamClient({ connections: 8 });
    });
    afterEach(() => controller.abort());
    afterAll(async () => {
      await http.close();
      await fake.close();
    });

    const context = (): AdapterContext => {
      controller = new AbortController();
      return {
        provider: options.name,
        http,
        baseUrl: options.baseUrl ? options.baseUrl(fake.url) : fake.url,
        key: options.key,
        network: networkConfigSchema.parse({}),
        timeoutMs: 5_000,
        signal: controller.signal,
      };
    };
    const lastRequest = (): RecordedUpstreamRequest => {
      const request = fake.requests.at(-1);
      if (!request) throw new Error('the adapter sent no request upstream');
      return request;
    };
    /** Plain answers; `recordedJson` keeps the JSON sent, for the `raw` assertions. */
    const answerWith = (answer: Answer<UpstreamAnswer>, defaultStatus = 200) => {
      const sent: { json?: unknown } = {};
      fake.setHandler(async (request, response) => {
        const resolved = await answer(request);
        sent.json = answerJson(resolved);
        writeAnswer(response, resolved, defaultStatus);
      });
      return sent;
    };
    const streamWith = (answer: Answer<UpstreamStreamAnswer>, mode: StreamMode = { kind: 'split' }) => {
      fake.setHandler(async (request, response) => writeStream(response, await answer(request), mode));
    };

    const contractCase = (
      name: ProviderContractCase,
      title: string,
      unavailable: string | undefined,
      body: () => Promise<void>,
    ): void => {
      const reason = skip[name] ?? unavailable;
      if (reason === undefined) it(title, body);
      else it.skip(`${title} (skipped: ${reason})`, body);
    };
    const lacks = (operation: keyof typeof OPERATION_METHODS): string | undefined =>
      operations.has(operation) ? undefined : `the adapter has no ${operation} operation`;

    const chatInput = (inputs: { messages: Message[]; params: Record<string, unknown> }): ChatInput => ({
      model: options.model,
      messages: structuredClone(inputs.messages),
      params: structuredClone(inputs.params),
    });
    const textInput = (): TextInput => ({
      model: options.model,
      prompt: PROVIDER_CONTRACT_INPUTS.text.prompt,
      params: { ...PROVIDER_CONTRACT_INPUTS.text.params },
    });

    contractCase('capabilities', 'declares exactly the operations it implements', undefined, async () => {
      for (const [operation, method] of Object.entries(OPERATION_METHODS)) {
        const declared = operations.has(operation as keyof typeof OPERATION_METHODS);
        expect(typeof adapter[method] === 'function', `${operation} declared ${declared}`).toBe(declared);
      }
    });

    contractCase('chat', 'chat: sends the request and normalises the answer', lacks('chat'), async () => {
      const sent = answerWith(upstream.chat);
      const result = await adapter.chat!(chatInput(PROVIDER_CONTRACT_INPUTS.chat), context());
      expectRequest.chat(lastRequest());
      expect(result.choices).toHaveLength(1);
      expect(result.choices[0]!.message.role).toBe('assistant');
      expect(result.choices[0]!.message.content).toBe('Hello there');
      expect(result.choices[0]!.finish_reason).toBe('stop');
      expectUsage(result.usage, 10, 5);
      expect(typeof result.id).toBe('string');
      expect(typeof result.created).toBe('number');
      expect(result.raw).toBeDefined();
      if (sent.json !== undefined) expect(result.raw).toEqual(sent.json);
    });

    contractCase(
      'chatTools',
      'chat with tools: sends tools and answers the tool call',
      lacks('chat'),
      async () => {
        answerWith(upstream.chatTools);
        const result = await adapter.chat!(chatInput(PROVIDER_CONTRACT_INPUTS.chatTools), context());
        expectRequest.chatTools(lastRequest());
        const choice = result.choices[0]!;
        expect([null, '']).toContain(choice.message.content);
        expect(choice.message.tool_calls).toHaveLength(1);
        const call = choice.message.tool_calls![0]!;
        expect(call.id).toEqual(expect.any(String));
        expect(call.id.length).toBeGreaterThan(0);
        expect(call.type).toBe('function');
        expect(call.function.name).toBe('get_weather');
        expect(JSON.parse(call.function.arguments)).toEqual({ city: 'Paris' });
        expect(choice.finish_reason).toBe('tool_calls');
        expectUsage(result.usage, 20, 8);
      },
    );

    contractCase(
      'vision',
      'vision: sends text and image parts',
      lacks('chat') ??
        (!adapter.capabilities.vision ? 'capabilities.vision is false' : undefined) ??
        (!expectRequest.vision ? 'no expectRequest.vision given' : undefined),
      async () => {
        answerWith(upstream.chat);
        const result = await adapter.chat!(chatInput(PROVIDER_CONTRACT_INPUTS.vision), context());
        expectRequest.vision!(lastRequest());
        expect(result.choices[0]!.message.content).toBe('Hello there');
      },
    );

    contractCase(
      'chatStream',
      'chat stream: chunks survive bytes split every 1-7 bytes and end with usage',
      lacks('chat_stream'),
      async () => {
        streamWith(upstream.chatStream);
        const chunks = await collect(
          adapter.chatStream!(chatInput(PROVIDER_CONTRACT_INPUTS.chat), context()),
        );
        expectRequest.chatStream?.(lastRequest());
        expectChatStream(chunks);
      },
    );

    contractCase(
      'chatStreamIncremental',
      'chat stream: yields a chunk before the upstream has finished',
      lacks('chat_stream'),
      async () => {
        const gradual = gradualStream('finish');
        streamWith(upstream.chatStream, gradual.mode);
        const chunks: ChatCompletionChunk[] = [];
        for await (const chunk of adapter.chatStream!(chatInput(PROVIDER_CONTRACT_INPUTS.chat), context())) {
          gradual.release();
          chunks.push(chunk);
        }
        expect(await gradual.outcome, 'a chunk arrived while the upstream still held entries back').toBe(
          true,
        );
        expectChatStream(chunks);
      },
    );

    contractCase(
      'chatStreamTools',
      'chat stream with tools: tool call arguments arrive incrementally',
      lacks('chat_stream'),
      async () => {
        streamWith(upstream.chatStreamTools);
        const chunks = await collect(
          adapter.chatStream!(chatInput(PROVIDER_CONTRACT_INPUTS.chatTools), context()),
        );
        const deltas = chunks.flatMap((chunk) =>
          chunk.choices.flatMap((choice) =>
            (choice.delta?.tool_calls ?? []).filter((call) => call.index === 0),
          ),
        );
        const name = deltas.find((delta) => delta.function?.name)?.function?.name;
        expect(name).toBe('get_weather');
        const opening = deltas.find((delta) => delta.id);
        expect(opening?.id?.length).toBeGreaterThan(0);
        expect(opening?.type).toBe('function');
        // Incremental: the opening (id, name) and the argument fragments come in separate chunks.
        const toolCallChunks = chunks.filter((chunk) =>
          chunk.choices.some((choice) => (choice.delta?.tool_calls ?? []).some((call) => call.index === 0)),
        );
        expect(toolCallChunks.length, 'chunks carrying the tool call').toBeGreaterThanOrEqual(2);
        expect(toolCallChunks[0]!.choices[0]!.delta!.tool_calls![0]!.function?.name).toBe('get_weather');
        const argumentsText = deltas.map((delta) => delta.function?.arguments ?? '').join('');
        expect(JSON.parse(argumentsText)).toEqual({ city: 'Paris' });
        const finishes = chunks.flatMap((chunk) => chunk.choices.map((choice) => choice.finish_reason));
        expect(finishes).toContain('tool_calls');
        for (const chunk of chunks) expect(chunk.object).toBe('chat.completion.chunk');
      },
    );

    contractCase(
      'error',
      'error: an upstream 400 becomes a GatewayError with its status and message',
      lacks('chat'),
      async () => {
        answerWith(upstream.error, 400);
        await expectUpstreamFailure(adapter.chat!(chatInput(PROVIDER_CONTRACT_INPUTS.chat), context()));
      },
    );

    contractCase(
      'chatStreamError',
      'chat stream error: an upstream 400 rejects the stream with its status and message',
      lacks('chat_stream'),
      async () => {
        answerWith(upstream.error, 400);
        await expectUpstreamFailure(
          collect(adapter.chatStream!(chatInput(PROVIDER_CONTRACT_INPUTS.chat), context())),
        );
      },
    );

    contractCase('text', 'text: completes a prompt', lacks('text'), async () => {
      if (!upstream.text) throw new Error('the adapter declares text: give upstream.text');
      const sent = answerWith(upstream.text);
      const result = await adapter.text!(textInput(), context());
      expectRequest.text?.(lastRequest());
      expect(result.choices[0]!.text).toBe('Once upon');
      expect(result.choices[0]!.finish_reason).toBe('stop');
      expectUsage(result.usage, 3, 2);
      if (sent.json !== undefined) expect(result.raw).toEqual(sent.json);
    });

    contractCase(
      'textStream',
      'text stream: yields text_completion chunks and usage',
      lacks('text_stream') ??
        (upstream.textStream || adapter.capabilities.textViaChat
          ? undefined
          : 'no upstream.textStream fixture given'),
      async () => {
        const native = upstream.textStream !== undefined;
        streamWith(upstream.textStream ?? upstream.chatStream);
        const chunks = await collect(adapter.textStream!(textInput(), context()));
        expectRequest.textStream?.(lastRequest());
        const text = chunks.flatMap((chunk) => chunk.choices.map((choice) => choice.text ?? '')).join('');
        expect(text).toBe(native ? 'Once upon' : 'Hello thére');
        for (const chunk of chunks) expect(chunk.object).toBe('text_completion');
        const finishes = chunks.flatMap((chunk) => chunk.choices.map((choice) => choice.finish_reason));
        expect(finishes).toContain('stop');
        const last = chunks.at(-1)!;
        expect(last.choices).toEqual([]);
        if (native) expectUsage(last.usage, 3, 2);
        else expectUsage(last.usage, 10, 5);
      },
    );

    contractCase('embeddings', 'embeddings: embeds every input in order', lacks('embeddings'), async () => {
      if (!upstream.embeddings) throw new Error('the adapter declares embeddings: give upstream.embeddings');
      const sent = answerWith(upstream.embeddings);
      const input: EmbeddingsInput = {
        model: options.model,
        input: [...PROVIDER_CONTRACT_INPUTS.embeddings.input],
        params: {},
      };
      const result = await adapter.embeddings!(input, context());
      expectRequest.embeddings?.(lastRequest());
      expect(result.data.map((item) => item.index)).toEqual([0, 1]);
      expect(result.data.map((item) => item.embedding)).toEqual([
        [0.1, 0.2],
        [0.3, 0.4],
      ]);
      expect(result.usage.prompt_tokens).toBe(2);
      if (sent.json !== undefined) expect(result.raw).toEqual(sent.json);
    });

    contractCase(
      'cancellation',
      'cancellation: aborting the signal ends the stream and closes the upstream response',
      lacks('chat_stream'),
      async () => {
        const gradual = gradualStream('hang');
        streamWith(upstream.chatStream, gradual.mode);
        const iterator = adapter.chatStream!(chatInput(PROVIDER_CONTRACT_INPUTS.chat), context())[
          Symbol.asyncIterator
        ]();
        const first = await iterator.next();
        expect(first.done).toBe(false);
        gradual.release();
        controller.abort();
        const deadline = Date.now() + CANCEL_WAIT_MS;
        let outcome: 'ended' | 'rejected' | 'timeout' = 'timeout';
        while (Date.now() < deadline) {
          const next = await Promise.race([
            iterator.next().then(
              (result) => (result.done ? ('ended' as const) : ('chunk' as const)),
              () => 'rejected' as const,
            ),
            sleep(deadline - Date.now()).then(() => 'timeout' as const),
          ]);
          if (next !== 'chunk') {
            outcome = next;
            break;
          }
        }
        expect(outcome, 'the stream must end or reject once aborted').not.toBe('timeout');
        const closed = await Promise.race([
          fake.abandoned.then(() => true),
          sleep(CANCEL_WAIT_MS).then(() => false),
        ]);
        expect(closed, 'the fake upstream saw its response closed').toBe(true);
      },
    );
  });
}

/** A gradual stream mode, released by the test once it holds a chunk. */
function gradualStream(after: 'finish' | 'hang') {
  let release: () => void = () => {};
  let settle: (early: boolean) => void = () => {};
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  const outcome = new Promise<boolean>((resolve) => {
    settle = resolve;
  });
  const mode: StreamMode = { kind: 'gradual', release: released, after, onReleased: settle };
  return { mode, release, outcome };
}

/** The normalised stream of the standard chat answer 'Hello thére'. */
function expectChatStream(chunks: ChatCompletionChunk[]): void {
  expect(chunks.length).toBeGreaterThan(0);
  for (const chunk of chunks) expect(chunk.object).toBe('chat.completion.chunk');
  const deltas = chunks.map((chunk) => chunk.choices[0]?.delta);
  expect(deltas.map((delta) => delta?.content ?? '').join('')).toBe('Hello thére');
  const firstRole = deltas.findIndex((delta) => delta?.role === 'assistant');
  const firstContent = deltas.findIndex((delta) => Boolean(delta?.content));
  expect(firstRole, 'a chunk carries role assistant').toBeGreaterThanOrEqual(0);
  expect(firstRole, 'role assistant comes no later than the first content').toBeLessThanOrEqual(firstContent);
  const finishes = chunks.flatMap((chunk) => chunk.choices.map((choice) => choice.finish_reason));
  expect(finishes).toContain('stop');
  const last = chunks.at(-1)!;
  expect(last.choices).toEqual([]);
  expectUsage(last.usage, 10, 5);
}
