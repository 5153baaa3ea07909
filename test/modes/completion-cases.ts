// Chat and text completions: what reaches the upstream, and the CompletionResponse that comes back.
import { chatCompletion } from '@gw/testkit';
import { describe, expect, it } from 'vitest';
import { type Json, post } from '../support/http.ts';
import { hello, type ModeContext, requests, UPSTREAM_KEY } from './context.ts';

export function completionCases(mode: ModeContext): void {
  const { chat } = requests(mode);

  describe('chat completions', () => {
    it('forwards the request in OpenAI form and answers a CompletionResponse', async () => {
      const answer = await chat({
        model: 'openai/gpt-4o-mini',
        messages: hello,
        max_tokens: 50,
        logit_bias: { '50256': -100 },
        params: { temperature: 0.3, foo_param: 'kept' },
        fallbacks: [],
      });

      expect(mode.fakes.primary.requests).toHaveLength(1);
      const upstream = mode.fakes.primary.last();
      expect(upstream.method).toBe('POST');
      expect(upstream.path).toBe('/v1/chat/completions');
      expect(upstream.headers.authorization).toBe(`Bearer ${UPSTREAM_KEY}`);
      expect(upstream.body).toEqual({
        model: 'gpt-4o-mini',
        messages: hello,
        max_tokens: 50,
        temperature: 0.3,
        foo_param: 'kept',
        logit_bias: { '50256': -100 },
      });

      expect(answer.status).toBe(200);
      expect(answer.headers.get('content-type')).toMatch(/^application\/json/);
      const raw = chatCompletion();
      expect(answer.body).toMatchObject({
        id: raw.id,
        object: 'chat.completion',
        model: 'gpt-4o-mini',
        created: raw.created,
        choices: [
          {
            index: 0,
            message: { role: 'assistant', content: 'Hello from the fake upstream' },
            finish_reason: 'stop',
          },
        ],
        usage: { prompt_tokens: 11, completion_tokens: 7, total_tokens: 18 },
        extra_fields: {
          provider: 'openai',
          model_params: {
            max_tokens: 50,
            temperature: 0.3,
            foo_param: 'kept',
            logit_bias: { '50256': -100 },
          },
        },
      });
      expect(Number.isInteger(answer.body.created)).toBe(true);
      expect(answer.body.extra_fields.latency).toBeTypeOf('number');
      expect(answer.body.extra_fields.latency).toBeGreaterThanOrEqual(0);
      expect(answer.body.extra_fields.raw_response).toEqual(raw);
    });

    it('strips the provider prefix from a model the upstream names with it', async () => {
      mode.fakes.primary.enqueue({ json: chatCompletion({ model: 'openai/gpt-4o-mini' }) });
      const answer = await chat({ model: 'openai/gpt-4o-mini', messages: hello });
      expect(answer.status).toBe(200);
      expect(answer.body.model).toBe('gpt-4o-mini');
    });

    it('maps the native params object: max_tokens and stop_sequences (as stop)', async () => {
      const answer = await chat({
        model: 'openai/gpt-4o-mini',
        messages: hello,
        params: { max_tokens: 20, stop_sequences: ['END', '\n\n'], temperature: 0 },
      });
      expect(answer.status).toBe(200);
      const body = mode.fakes.primary.last().body as Json;
      expect(body).toMatchObject({ max_tokens: 20, stop: ['END', '\n\n'], temperature: 0 });
      expect(body).not.toHaveProperty('stop_sequences');
      expect(body).not.toHaveProperty('params');
      expect(answer.body.extra_fields.model_params).toMatchObject({ max_tokens: 20, temperature: 0 });
    });

    it('lets params win over the same top-level field', async () => {
      const answer = await chat({
        model: 'openai/gpt-4o-mini',
        messages: hello,
        max_tokens: 50,
        params: { max_tokens: 20 },
      });
      expect(answer.status).toBe(200);
      expect((mode.fakes.primary.last().body as Json).max_tokens).toBe(20);
    });

    it('passes tools and tool_choice through and answers tool_calls', async () => {
      const tools = [
        {
          type: 'function',
          function: {
            name: 'get_weather',
            description: 'Current weather of a city',
            parameters: {
              type: 'object',
              properties: { city: { type: 'string', description: 'City name' } },
              required: ['city'],
            },
          },
        },
      ];
      const toolChoice = { type: 'function', function: { name: 'get_weather' } };
      const toolCalls = [
        { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
      ];
      mode.fakes.primary.enqueue({ json: chatCompletion({ content: null, toolCalls }) });

      const answer = await chat({
        model: 'openai/gpt-4o-mini',
        messages: [{ role: 'user', content: 'Weather in Paris?' }],
        params: { tools, tool_choice: toolChoice },
      });

      const body = mode.fakes.primary.last().body as Json;
      expect(body.tools).toEqual(tools);
      expect(body.tool_choice).toEqual(toolChoice);
      expect(answer.status).toBe(200);
      expect(answer.body.choices[0]).toMatchObject({
        finish_reason: 'tool_calls',
        message: { role: 'assistant', content: null, tool_calls: toolCalls },
      });
    });

    it('forwards an assistant message with null content and tool_calls, and the tool message', async () => {
      const messages = [
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
        { role: 'tool', tool_call_id: 'call_1', content: '{"temperature":21}' },
      ];
      const answer = await chat({ model: 'openai/gpt-4o-mini', messages });
      expect(answer.status).toBe(200);
      expect((mode.fakes.primary.last().body as Json).messages).toEqual(messages);
    });

    it('forwards image_url content parts', async () => {
      const messages = [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What is in this picture?' },
            { type: 'image_url', image_url: { url: 'https://example.com/cat.png', detail: 'high' } },
          ],
        },
      ];
      const answer = await chat({ model: 'openai/gpt-4o-mini', messages });
      expect(answer.status).toBe(200);
      expect((mode.fakes.primary.last().body as Json).messages).toEqual(messages);
    });

    it('serves /chat/completions without the /v1 prefix', async () => {
      const answer = await chat({ model: 'openai/gpt-4o-mini', messages: hello }, '/chat/completions');
      expect(answer.status).toBe(200);
      expect(answer.body.object).toBe('chat.completion');
      expect(mode.fakes.primary.last().path).toBe('/v1/chat/completions');
    });
  });

  describe('text completions', () => {
    it('takes the provider from `provider` and forwards `text` as `prompt`', async () => {
      const answer = await post(`${mode.base}/v1/text/completions`, {
        provider: 'openai',
        model: 'gpt-3.5-turbo-instruct',
        text: 'Once',
        params: { max_tokens: 5, stop_sequences: ['.'] },
      });
      const upstream = mode.fakes.primary.last();
      expect(upstream.path).toBe('/v1/completions');
      expect(upstream.headers.authorization).toBe(`Bearer ${UPSTREAM_KEY}`);
      expect(upstream.body).toEqual({
        model: 'gpt-3.5-turbo-instruct',
        prompt: 'Once',
        max_tokens: 5,
        stop: ['.'],
      });
      expect(answer.status).toBe(200);
      expect(answer.body).toMatchObject({
        object: 'text.completion',
        model: 'gpt-3.5-turbo-instruct',
        choices: [
          { index: 0, message: { role: 'assistant', content: 'Once upon a time' }, finish_reason: 'stop' },
        ],
        usage: { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 },
        extra_fields: { provider: 'openai', model_params: { max_tokens: 5 } },
      });
    });

    it('accepts an `openai/...` model', async () => {
      const answer = await post(`${mode.base}/v1/text/completions`, {
        model: 'openai/gpt-3.5-turbo-instruct',
        text: 'Tell a story',
      });
      expect(answer.status).toBe(200);
      expect(answer.body.object).toBe('text.completion');
      expect(answer.body.model).toBe('gpt-3.5-turbo-instruct');
      expect(mode.fakes.primary.last().body).toEqual({
        model: 'gpt-3.5-turbo-instruct',
        prompt: 'Tell a story',
      });
    });
  });
}
