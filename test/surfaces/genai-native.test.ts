// GenAI in, Gemini out (issue 10, same-format fidelity), in both modes: a generate-content request served by
// Gemini reaches it as the caller sent it (thinking and safety settings, thought signatures, Google's own
// tools), and its answer, whole or streamed over SSE, comes back as Gemini sent it. Served by another
// provider it is translated, and what only Google can run is a 400 naming it.
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

const REQUEST = {
  systemInstruction: { parts: [{ text: 'Be brief.' }] },
  contents: [
    { role: 'user', parts: [{ text: 'What is new today?' }] },
    {
      role: 'model',
      parts: [
        { text: 'Let me search.', thought: true, thoughtSignature: 'CiQBcsjafX…' },
        { functionCall: { name: 'lookup', args: { q: 'news' } }, thoughtSignature: 'CiQBcsjafY…' },
      ],
    },
    { role: 'user', parts: [{ functionResponse: { name: 'lookup', response: { result: 'rain' } } }] },
  ],
  tools: [{ functionDeclarations: [{ name: 'lookup', parameters: { type: 'OBJECT', properties: {} } }] }],
  generationConfig: { maxOutputTokens: 256, thinkingConfig: { thinkingBudget: 1024, includeThoughts: true } },
  safetySettings: [{ category: 'HARM_CATEGORY_HARASSMENT', threshold: 'BLOCK_ONLY_HIGH' }],
  labels: { team: 'search' },
};

const ANSWER = {
  candidates: [
    {
      content: {
        role: 'model',
        parts: [
          { text: 'Thinking about rain.', thought: true },
          { text: 'It rains.', thoughtSignature: 'CiQBcsjafZ…' },
        ],
      },
      finishReason: 'STOP',
      index: 0,
      safetyRatings: [{ category: 'HARM_CATEGORY_HARASSMENT', probability: 'NEGLIGIBLE' }],
    },
  ],
  usageMetadata: {
    promptTokenCount: 40,
    candidatesTokenCount: 4,
    thoughtsTokenCount: 12,
    totalTokenCount: 56,
  },
  modelVersion: 'gemini-2.5-pro',
  responseId: 'resp-gemini-1',
};

const STREAM = [
  `data: ${JSON.stringify({ ...ANSWER, candidates: [{ content: { role: 'model', parts: [{ text: 'Thinking.', thought: true }] }, index: 0 }], usageMetadata: undefined })}\n\n`,
  `data: ${JSON.stringify(ANSWER)}\n\n`,
];

describe.each(MODES)('/genai: same format forwarded as it came (%s)', (_mode, start) => {
  let fakes: SurfaceFakes;
  let gateway: LaunchedGateway;
  const generate = (model: string, method: string, body: unknown) =>
    postForText(`${gateway.url}/genai/v1beta/models/${model}:${method}`, body, {
      'x-goog-api-key': VIRTUAL_KEY,
    });

  beforeAll(async () => {
    fakes = await startFakes();
    gateway = await start(surfaceConfig(fakes));
  });
  afterAll(async () => {
    await gateway?.close();
    await closeFakes(fakes);
  });

  it('sends Gemini the request as it came, and answers what Gemini answered', async () => {
    fakes.gemini.enqueue({ json: ANSWER });
    const answer = await generate('gemini-2.5-pro', 'generateContent', REQUEST);
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual(ANSWER);
    const sent = fakes.gemini.last();
    expect(sent.path).toBe('/v1beta/models/gemini-2.5-pro:generateContent');
    expect(sent.body).toEqual(REQUEST);
    expect(sent.headers['x-goog-api-key']).toBe(PROVIDER_KEYS.gemini);
  });

  it('relays an SSE stream event by event as Gemini sent it', async () => {
    fakes.gemini.enqueue({ sse: STREAM });
    const answer = await generate('gemini-2.5-pro', 'streamGenerateContent?alt=sse', REQUEST);
    expect(answer.status).toBe(200);
    expect(answer.text).toBe(STREAM.join(''));
    expect(fakes.gemini.last().path).toBe('/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse');
  });

  it('translates for another provider, and refuses Google’s own tools there with a 400', async () => {
    const translated = await generate('openai%2Fgpt-4o-mini', 'generateContent', REQUEST);
    expect(translated.status).toBe(200);
    expect(translated.body).toMatchObject({ candidates: [{ content: { role: 'model' } }] });
    expect(fakes.openai.last().body).toMatchObject({
      model: 'gpt-4o-mini',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user' },
        { role: 'assistant', tool_calls: [{ function: { name: 'lookup' } }] },
        { role: 'tool', content: '{"result":"rain"}' },
      ],
    });

    const before = fakes.openai.requests.length;
    const refused = await generate('openai%2Fgpt-4o-mini', 'generateContent', {
      ...REQUEST,
      tools: [...REQUEST.tools, { googleSearch: {} }],
    });
    expect(refused.status).toBe(400);
    expect(JSON.stringify(refused.body)).toContain("tools[1]: a 'googleSearch' tool cannot be translated");
    expect(fakes.openai.requests.length).toBe(before);
  });

  it('answers a method a path does not take with 405 and Allow from the route table, in Gemini’s shape', async () => {
    const before = fakes.gemini.requests.length;
    const call = (method: string, path: string) =>
      fetch(`${gateway.url}/genai/v1beta/${path}`, {
        method,
        headers: { 'x-goog-api-key': VIRTUAL_KEY, 'content-type': 'application/json' },
        ...(method === 'GET' ? {} : { body: JSON.stringify(REQUEST) }),
      });
    for (const [method, path, allowed] of [
      ['POST', 'models', 'GET'],
      ['POST', 'models/gemini-2.5-pro', 'GET'],
      ['DELETE', 'models/gemini-2.5-pro', 'GET'],
      ['GET', 'models/gemini-2.5-pro:generateContent', 'POST'],
      ['GET', 'openai/gpt-4o-mini:countTokens', 'POST'],
    ] as const) {
      const answer = await call(method, path);
      expect(answer.status, `${method} ${path}`).toBe(405);
      expect(answer.headers.get('allow'), `${method} ${path}`).toBe(allowed);
      const body = (await answer.json()) as {
        error: { message: string; details: Array<{ reason: string }> };
      };
      expect(body.error.message).toBe(`${method} is not allowed on /genai/v1beta/${path}; use ${allowed}`);
      expect(body.error.details[0]!.reason).toBe('method_not_allowed');
    }
    const unknown = await call('GET', 'tunedModels');
    expect(unknown.status).toBe(404);
    expect(((await unknown.json()) as { error: { status: string } }).error.status).toBe('NOT_FOUND');
    expect(fakes.gemini.requests.length).toBe(before);
  });
});
