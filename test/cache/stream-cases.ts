// Streams: a streamed answer is stored once it ended, and a hit is replayed chunk by chunk in the caller's
// surface format, through the official SDKs where one exists: OpenAI chat SSE, Anthropic messages, GenAI
// streamGenerateContent and Bedrock ConverseStream (binary event stream). A whole answer replays as a stream.
import Anthropic from '@anthropic-ai/sdk';
import { BedrockRuntimeClient, ConverseStreamCommand } from '@aws-sdk/client-bedrock-runtime';
import { GoogleGenAI } from '@google/genai';
import { scaled } from '@gw/testkit';
import { describe, expect, it } from 'vitest';
import { readSse } from '../support/http.ts';
import { ask, type CacheContext, helpers, KEYS } from './context.ts';

export function streamCases(context: CacheContext): void {
  const { chat, andStored, asHit } = helpers(context);
  const key = KEYS.erin;

  const streamChat = async (base: string, body: Record<string, unknown>) => {
    const response = await fetch(`${base}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-gw-vk': key.value },
      body: JSON.stringify({ ...body, stream: true }),
      signal: AbortSignal.timeout(scaled(5_000)),
    });
    const events = await readSse(response);
    return { headers: response.headers, events: events.map((event) => event.data) };
  };
  const textOf = (events: string[]) =>
    events
      .filter((data) => data !== '[DONE]')
      .map((data) => JSON.parse(data).choices[0]?.delta?.content ?? '')
      .join('');

  describe('streams', () => {
    it('replays a stored stream as OpenAI chunks on another replica, and serves it whole too', async () => {
      const first = await andStored(() => streamChat(context.gateway.url, ask('Stream a greeting')));
      expect(first.headers.get('x-gw-cache')).toBe('miss');
      expect(textOf(first.events)).toBe('Hello wörld');
      const replay = await asHit(() => streamChat(context.reader, ask('Stream a greeting')));
      expect(replay.headers.get('x-gw-cache')).toBe('hit');
      expect(replay.headers.get('content-type')).toBe('text/event-stream');
      expect(textOf(replay.events)).toBe('Hello wörld');
      expect(replay.events.at(-1)).toBe('[DONE]');
      expect(JSON.parse(replay.events[0]!).extra_fields.cache).toMatchObject({
        status: 'hit',
        type: 'exact',
      });
      const whole = await asHit(() => chat(context.reader, key, ask('Stream a greeting')));
      expect(whole.body.choices[0]).toMatchObject({
        message: { content: 'Hello wörld' },
        finish_reason: 'stop',
      });

      // A whole answer, replayed as a stream.
      await andStored(() => chat(context.gateway.url, key, ask('Answer whole first')));
      const cut = await asHit(() => streamChat(context.reader, ask('Answer whole first')));
      expect(textOf(cut.events)).toBe('Hello from the fake upstream');
    });

    it('replays through /anthropic/v1/messages as Anthropic events', async () => {
      let headers = new Headers();
      const recording: typeof fetch = async (input, init) => {
        const response = await fetch(input, init);
        headers = response.headers;
        return response;
      };
      const client = (base: string) =>
        new Anthropic({ baseURL: `${base}/anthropic`, apiKey: key.value, maxRetries: 0, fetch: recording });
      const run = async (base: string) => {
        const stream = client(base).messages.stream({
          model: 'openai/gpt-4o-mini',
          max_tokens: 64,
          messages: [{ role: 'user', content: 'Greet me, Anthropic style' }],
        });
        const final = await stream.finalMessage();
        return { final, status: headers.get('x-gw-cache') };
      };
      const first = await andStored(() => run(context.gateway.url));
      expect(first.status).toBe('miss');
      const replay = await asHit(() => run(context.reader));
      expect(replay.status).toBe('hit');
      expect(replay.final).toMatchObject({
        content: [{ type: 'text', text: 'Hello wörld' }],
        stop_reason: 'end_turn',
        usage: { input_tokens: 0, output_tokens: 0 },
      });
    });

    it('replays through /genai …:streamGenerateContent as GenAI chunks', async () => {
      const client = (base: string) =>
        new GoogleGenAI({
          apiKey: key.value,
          httpOptions: { baseUrl: `${base}/genai`, apiVersion: 'v1beta' },
        });
      const run = async (base: string) => {
        let text = '';
        let finish: string | undefined;
        for await (const chunk of await client(base).models.generateContentStream({
          model: 'openai/gpt-4o-mini',
          contents: 'Greet me, Gemini style',
        })) {
          text += chunk.text ?? '';
          finish ??= chunk.candidates?.[0]?.finishReason;
        }
        return { text, finish };
      };
      expect(await andStored(() => run(context.gateway.url))).toEqual({
        text: 'Hello wörld',
        finish: 'STOP',
      });
      expect(await asHit(() => run(context.reader))).toEqual({ text: 'Hello wörld', finish: 'STOP' });
    });

    it('replays through /bedrock …/converse-stream as a binary event stream', async () => {
      const client = (base: string) =>
        new BedrockRuntimeClient({
          endpoint: `${base}/bedrock`,
          region: 'us-east-1',
          credentials: { accessKeyId: key.value, secretAccessKey: 'not-verified-by-gw' },
          maxAttempts: 1,
        });
      const run = async (base: string) => {
        const bedrock = client(base);
        try {
          const answer = await bedrock.send(
            new ConverseStreamCommand({
              modelId: 'openai/gpt-4o-mini',
              messages: [{ role: 'user', content: [{ text: 'Greet me, Bedrock style' }] }],
            }),
          );
          let text = '';
          const kinds: string[] = [];
          for await (const event of answer.stream!) {
            kinds.push(Object.keys(event).find((name) => name !== '$unknown')!);
            text += event.contentBlockDelta?.delta?.text ?? '';
          }
          return { text, first: kinds[0], last: kinds.slice(-2) };
        } finally {
          bedrock.destroy();
        }
      };
      const expected = { text: 'Hello wörld', first: 'messageStart', last: ['messageStop', 'metadata'] };
      expect(await andStored(() => run(context.gateway.url))).toEqual(expected);
      expect(await asHit(() => run(context.reader))).toEqual(expected);
    });
  });
}
