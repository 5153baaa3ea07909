import { PROVIDER_CONTRACT_INPUTS, type RecordedUpstreamRequest } from '@gw/testkit';
import { expect } from 'vitest';

export interface OpenAiRequestStyle {
  model: string;
  /** Headers the request must carry; `undefined` means the header must be absent. */
  headers: Record<string, string | undefined>;
  /** Full paths (with query) per operation; OpenAI's `/v1/...` by default. */
  paths?: { chat?: string; text?: string; embeddings?: string };
  /** Streams ask for usage with `stream_options` (every server but mistral). */
  streamOptions?: boolean;
  /** Text completions go out as a chat with the prompt as the user message. */
  textViaChat?: boolean;
}

/**
 * The contract's `expectRequest` for servers that take OpenAI's request format: the standard inputs must go
 * out as the same OpenAI bodies, only path and headers differ. Providers with quirks override single cases.
 */
export function openAiRequestExpectations(style: OpenAiRequestStyle) {
  const paths = {
    chat: '/v1/chat/completions',
    text: '/v1/completions',
    embeddings: '/v1/embeddings',
    ...style.paths,
  };
  const expectHeaders = (request: RecordedUpstreamRequest) => {
    expect(request.method).toBe('POST');
    expect(request.headers['content-type']).toBe('application/json');
    for (const [name, value] of Object.entries(style.headers)) expect(request.headers[name]).toBe(value);
  };
  const { chat, chatTools, vision, text, embeddings } = PROVIDER_CONTRACT_INPUTS;
  return {
    chat: (request: RecordedUpstreamRequest) => {
      expectHeaders(request);
      expect(request.path).toBe(paths.chat);
      expect(request.body).toEqual({
        model: style.model,
        messages: chat.messages,
        max_tokens: 50,
        temperature: 0.2,
        stop: ['END'],
      });
    },
    chatTools: (request: RecordedUpstreamRequest) => {
      expect(request.body).toEqual({ model: style.model, messages: chatTools.messages, ...chatTools.params });
    },
    vision: (request: RecordedUpstreamRequest) => {
      expect(request.body).toEqual({ model: style.model, messages: vision.messages });
    },
    chatStream: (request: RecordedUpstreamRequest) => {
      expectHeaders(request);
      expect(request.path).toBe(paths.chat);
      expect(request.body).toMatchObject({ model: style.model, stream: true });
      const streamOptions = (request.body as { stream_options?: unknown }).stream_options;
      if (style.streamOptions === false) expect(streamOptions).toBeUndefined();
      else expect(streamOptions).toEqual({ include_usage: true });
    },
    text: (request: RecordedUpstreamRequest) => {
      expectHeaders(request);
      if (style.textViaChat) {
        expect(request.path).toBe(paths.chat);
        expect(request.body).toEqual({
          model: style.model,
          messages: [{ role: 'user', content: text.prompt }],
          ...text.params,
        });
      } else {
        expect(request.path).toBe(paths.text);
        expect(request.body).toEqual({ model: style.model, prompt: text.prompt, ...text.params });
      }
    },
    embeddings: (request: RecordedUpstreamRequest) => {
      expectHeaders(request);
      expect(request.path).toBe(paths.embeddings);
      expect(request.body).toEqual({ model: style.model, input: embeddings.input });
    },
  };
}
