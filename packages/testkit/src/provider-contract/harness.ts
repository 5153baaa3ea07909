import {
  type AdapterContext,
  type ChatInput,
  type StreamPiece,
  type TextInput,
  UpstreamClient,
  VerbatimChunk,
} from '@gw/router/testing';
import { type ChatCompletionChunk, GatewayError, type Message, networkConfigSchema } from '@gw/shared';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import {
  PROVIDER_CONTRACT_INPUTS,
  type ProviderContractCase,
  type ProviderContractOptions,
  type RecordedUpstreamRequest,
  type UpstreamAnswer,
  type UpstreamStreamAnswer,
} from './contract-options.ts';
import {
  answerJson,
  type ContractUpstream,
  type StreamMode,
  startContractUpstream,
  writeAnswer,
  writeStream,
} from './contract-upstream.ts';

type Answer<Shape> = (request: RecordedUpstreamRequest) => Shape | Promise<Shape>;

export const OPERATION_METHODS = {
  chat: 'chat',
  chat_stream: 'chatStream',
  text: 'text',
  text_stream: 'textStream',
  embeddings: 'embeddings',
} as const;

/** A stream's chunks; one passed on as its upstream sent it must be its text, parsed. */
export async function collectChunks(stream: AsyncIterable<StreamPiece>): Promise<ChatCompletionChunk[]> {
  const chunks: ChatCompletionChunk[] = [];
  for await (const piece of stream) chunks.push(chunkOf(piece));
  return chunks;
}

/** A piece's chunk, checked against its text when it has one. */
export function chunkOf(piece: StreamPiece): ChatCompletionChunk {
  if (!(piece instanceof VerbatimChunk)) return piece;
  expect(JSON.parse(piece.json), 'a chunk relayed as it came is its text').toEqual(piece.chunk);
  return piece.chunk;
}

export function expectUsage(
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

export async function expectUpstreamFailure(attempt: Promise<unknown>): Promise<void> {
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

/**
 * What every case of the suite uses: the upstream, a fresh adapter context per call (its abort controller
 * aborted after each case), the inputs, and `contractCase`, which runs a case unless the adapter skips it
 * with a stated reason or lacks the operation.
 */
export function createHarness(options: ProviderContractOptions) {
  const { adapter } = options;
  const operations = new Set(adapter.capabilities.operations);
  const skip = options.skip ?? {};
  const state: { upstream?: ContractUpstream; http?: UpstreamClient; controller: AbortController } = {
    controller: new AbortController(),
  };
  beforeAll(async () => {
    state.upstream = await startContractUpstream();
    state.http = new UpstreamClient({ connections: 8 });
  });
  afterEach(() => state.controller.abort());
  afterAll(async () => {
    await state.http?.close();
    await state.upstream?.close();
  });
  const upstream = () => {
    if (!state.upstream) throw new Error('the contract upstream is not started');
    return state.upstream;
  };

  return {
    upstream,
    abort: () => state.controller.abort(),
    context(): AdapterContext {
      state.controller = new AbortController();
      const url = upstream().url;
      return {
        provider: options.name,
        http: state.http!,
        baseUrl: options.baseUrl ? options.baseUrl(url) : url,
        key: options.key,
        network: networkConfigSchema.parse({}),
        timeoutMs: 5_000,
        signal: state.controller.signal,
        environment: {},
      };
    },
    lastRequest(): RecordedUpstreamRequest {
      const request = upstream().requests.at(-1);
      if (!request) throw new Error('the adapter sent no request upstream');
      return request;
    },
    /** Plain answers; the JSON sent is kept for the `raw` assertions. */
    answerWith(answer: Answer<UpstreamAnswer>, defaultStatus = 200) {
      const sent: { json?: unknown } = {};
      upstream().setHandler(async (request, response) => {
        const resolved = await answer(request);
        sent.json = answerJson(resolved);
        writeAnswer(response, resolved, defaultStatus);
      });
      return sent;
    },
    streamWith(answer: Answer<UpstreamStreamAnswer>, mode: StreamMode = { kind: 'split' }) {
      upstream().setHandler(async (request, response) => writeStream(response, await answer(request), mode));
    },
    contractCase(
      name: ProviderContractCase,
      title: string,
      unavailable: string | undefined,
      body: () => Promise<void>,
    ) {
      const reason = skip[name] ?? unavailable;
      if (reason === undefined) it(title, body);
      else it.skip(`${title} (skipped: ${reason})`, body);
    },
    lacks(operation: keyof typeof OPERATION_METHODS): string | undefined {
      return operations.has(operation) ? undefined : `the adapter has no ${operation} operation`;
    },
    chatInput(inputs: { messages: Message[]; params: Record<string, unknown> }): ChatInput {
      return {
        model: options.model,
        messages: structuredClone(inputs.messages),
        params: structuredClone(inputs.params),
      };
    },
    textInput(): TextInput {
      return {
        model: options.model,
        prompt: PROVIDER_CONTRACT_INPUTS.text.prompt,
        params: { ...PROVIDER_CONTRACT_INPUTS.text.params },
      };
    },
  };
}

export type Harness = ReturnType<typeof createHarness>;
