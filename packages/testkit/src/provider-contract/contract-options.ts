import type { IncomingHttpHeaders } from 'node:http';
import type { ProviderAdapter, ResolvedKey } from '@gw/router/testing';
import type { Message, Usage } from '@gw/shared';

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

/** Answers to the chat input, whole and streamed, and the `Usage` the adapter must map their usage to. */
export interface BilledUsageAnswers {
  chat?: Answer<UpstreamAnswer>;
  chatStream?: Answer<UpstreamStreamAnswer>;
  expected: Usage;
}

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
  | 'cancellation'
  | 'billedUsage'
  | 'billedUsageStream'
  | 'billedImages'
  | 'billedImagesStream';

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
  /**
   * Usage as the provider bills it: answers to the chat input (any text, finish stop) whose usage, in the
   * provider's exact fields, reports prompt tokens read from its cache, written to it and reasoning tokens as far
   * as the provider reports each, and the `Usage` the adapter must map it to (billedUsage, billedUsageStream).
   */
  billedUsage: BilledUsageAnswers & {
    /**
     * Answers whose usage reports image (and audio) tokens in the prompt and in the answer, in the provider's
     * exact fields, and the `Usage` they map to (billedImages, billedImagesStream): for adapters whose provider
     * reports them apart (Gemini's and Vertex's breakdowns by modality).
     */
    images?: BilledUsageAnswers;
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
