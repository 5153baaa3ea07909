// gw's `/openai` answers against OpenAI's published OpenAPI schemas (test/fixtures/openai-openapi, issue 10),
// in both modes: chat completions whole and streamed, Responses objects, text completions and embeddings,
// each served by another provider (translated by gw) and by OpenAI, so strict clients that validate what
// they receive accept gw's answers whoever served them.
import { readFileSync } from 'node:fs';
import { anthropicMessage, type LaunchedGateway } from '@gw/testkit';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postForText } from '../support/http.ts';
import {
  closeFakes,
  MODES,
  type SurfaceFakes,
  startFakes,
  surfaceConfig,
  VIRTUAL_KEY,
} from './surface-gateway.ts';

const SPEC = JSON.parse(
  readFileSync(new URL('../fixtures/openai-openapi/schemas.json', import.meta.url), 'utf8'),
) as Record<string, unknown>;
// OpenAPI's own keywords (discriminator, x-…) are not JSON Schema's: ignored rather than refused; formats are
// not checked (the spec uses some no validator defines).
const ajv = new Ajv2020({ strict: false, validateFormats: false, allErrors: true });
ajv.addSchema({ ...(withoutNullable(SPEC) as object), $id: 'openai' });

/**
 * OpenAPI 3.0's `nullable`, which the 3.1 document still uses in places, as JSON Schema says it: a type that
 * admits null (ajv refuses `nullable` without a `type` beside it).
 */
function withoutNullable(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(withoutNullable);
  if (typeof node !== 'object' || node === null) return node;
  const { nullable, ...rest } = node as Record<string, unknown>;
  const converted = Object.fromEntries(
    Object.entries(rest).map(([key, value]) => [key, withoutNullable(value)]),
  );
  if (nullable !== true) return converted;
  if (Array.isArray(converted['enum'])) converted['enum'] = [...converted['enum'], null];
  if (typeof converted['type'] === 'string') return { ...converted, type: [converted['type'], 'null'] };
  return { anyOf: [converted, { type: 'null' }] };
}

function schema(name: string): ValidateFunction {
  const validate = ajv.getSchema(`openai#/components/schemas/${name}`);
  if (!validate) throw new Error(`no schema ${name}`);
  return validate;
}

/** The schema's complaints about a value, or none. */
function problems(name: string, value: unknown): string[] {
  const validate = schema(name);
  if (validate(value)) return [];
  return (validate.errors ?? []).map((error) => `${error.instancePath || '/'} ${error.message}`);
}

/** The JSON payloads of an SSE answer (`data:` lines), without the closing `[DONE]`. */
function events(text: string): unknown[] {
  return text
    .split('\n')
    .filter((line) => line.startsWith('data: ') && line !== 'data: [DONE]')
    .map((line) => JSON.parse(line.slice('data: '.length)));
}

describe.each(MODES)('/openai answers against OpenAI’s OpenAPI schemas (%s)', (_mode, start) => {
  let fakes: SurfaceFakes;
  let gateway: LaunchedGateway;
  const send = (path: string, body: unknown) =>
    postForText(`${gateway.url}/openai/v1${path}`, body, { authorization: `Bearer ${VIRTUAL_KEY}` });

  beforeAll(async () => {
    fakes = await startFakes();
    gateway = await start(surfaceConfig(fakes));
  });
  afterAll(async () => {
    await gateway?.close();
    await closeFakes(fakes);
  });

  it.each(['anthropic/claude-opus-4-7', 'gemini/gemini-2.5-flash', 'gpt-4o'])(
    'chat completions served by %s, whole and streamed',
    async (model) => {
      const whole = await send('/chat/completions', { model, messages: [{ role: 'user', content: 'Hi' }] });
      expect(whole.status).toBe(200);
      expect(problems('CreateChatCompletionResponse', whole.body)).toEqual([]);

      const streamed = await send('/chat/completions', {
        model,
        messages: [{ role: 'user', content: 'Hi' }],
        stream: true,
        stream_options: { include_usage: true },
      });
      expect(streamed.status).toBe(200);
      const chunks = events(streamed.text);
      expect(chunks.length).toBeGreaterThan(1);
      for (const chunk of chunks) expect(problems('CreateChatCompletionStreamResponse', chunk)).toEqual([]);
    },
  );

  it('a Responses object served by another provider, its thinking as a reasoning summary', async () => {
    const thinking = anthropicMessage({ text: 'Hello.' });
    fakes.anthropic.enqueue({
      json: {
        ...thinking,
        content: [{ type: 'thinking', thinking: 'Greet back.', signature: 'S' }, ...thinking.content],
      },
    });
    const answer = await send('/responses', { model: 'anthropic/claude-opus-4-7', input: 'Hi' });
    expect(answer.status).toBe(200);
    expect(problems('Response', answer.body)).toEqual([]);
    expect(answer.body.output[0]).toMatchObject({
      type: 'reasoning',
      summary: [{ type: 'summary_text', text: 'Greet back.' }],
    });
    expect(answer.body.output_text ?? answer.body.output[1].content[0].text).toBe('Hello.');
  });

  it('a Responses object served by another provider echoes the function tools with strict (issue 27)', async () => {
    const answer = await send('/responses', {
      model: 'anthropic/claude-opus-4-7',
      input: 'Weather?',
      tools: [
        { type: 'function', name: 'weather', parameters: { type: 'object', properties: {} } },
        { type: 'function', name: 'time', description: 'Now', parameters: { type: 'object' }, strict: true },
      ],
    });
    expect(answer.status).toBe(200);
    expect(problems('Response', answer.body)).toEqual([]);
    expect(answer.body.tools).toMatchObject([
      { name: 'weather', strict: false },
      { name: 'time', strict: true },
    ]);
  });

  it('text completions and embeddings served by other providers', async () => {
    const text = await send('/completions', {
      model: 'anthropic/claude-opus-4-7',
      prompt: 'Once',
      max_tokens: 8,
    });
    expect(text.status).toBe(200);
    expect(problems('CreateCompletionResponse', text.body)).toEqual([]);

    const embeddings = await send('/embeddings', { model: 'gemini/text-embedding-004', input: ['a', 'b'] });
    expect(embeddings.status).toBe(200);
    expect(problems('CreateEmbeddingResponse', embeddings.body)).toEqual([]);
  });
});
