// The provider fakes' prompt cache (opt-in): a conversation's next turn, sent with the same API key, reports its
// previous prompt as cached, as OpenAI (in steps of 128 tokens) and Anthropic (billed apart) report it.
import { afterAll, describe, expect, it } from 'vitest';
import { startFakeAnthropic } from './fake-anthropic.ts';
import { startFakeOpenAi } from './fake-openai.ts';
import { FakePromptCache } from './fake-prompt-cache.ts';
import type { FakeUpstream } from './fake-upstream.ts';

/** About 2 000 tokens of system prompt (8 000 characters), as the fakes estimate them. */
const SYSTEM = 'You are a careful assistant. '.repeat(276);
const turn1 = [
  { role: 'system', content: SYSTEM },
  { role: 'user', content: 'First question' },
];
const turn2 = [
  ...turn1,
  { role: 'assistant', content: 'First answer' },
  { role: 'user', content: 'Second question' },
];
const tokensOf = (blocks: unknown[]) =>
  blocks.reduce<number>((sum, block) => sum + Math.ceil(JSON.stringify(block).length / 4), 0);

const fakes: FakeUpstream[] = [];
const started = async (start: Promise<FakeUpstream>) => {
  const fake = await start;
  fakes.push(fake);
  return fake;
};
afterAll(async () => {
  await Promise.all(fakes.map((fake) => fake.close()));
});

async function post(url: string, body: unknown, headers: Record<string, string>) {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  expect(response.status).toBe(200);
  return response;
}

describe('fake OpenAI with promptCache', () => {
  const chat = async (fake: FakeUpstream, messages: unknown[], key = 'sk-one') => {
    const answer = await post(
      `${fake.url}/v1/chat/completions`,
      { model: 'gpt-4o', messages },
      { authorization: `Bearer ${key}` },
    );
    return ((await answer.json()) as { usage: Record<string, unknown> }).usage;
  };

  it('reports the previous turn as cached for the same key, rounded down to 128 tokens', async () => {
    const fake = await started(startFakeOpenAi({ promptCache: true }));
    expect(await chat(fake, turn1)).toEqual({
      prompt_tokens: tokensOf(turn1),
      completion_tokens: 7,
      total_tokens: tokensOf(turn1) + 7,
      prompt_tokens_details: { cached_tokens: 0 },
    });
    const usage = await chat(fake, turn2);
    expect(usage['prompt_tokens']).toBe(tokensOf(turn2));
    expect(usage['prompt_tokens_details']).toEqual({
      cached_tokens: Math.floor(tokensOf(turn1) / 128) * 128,
    });
    // Another key has a cache of its own.
    expect((await chat(fake, turn2, 'sk-two'))['prompt_tokens_details']).toEqual({ cached_tokens: 0 });
  });

  it('caches no prompt shorter than 1024 tokens', async () => {
    const fake = await started(startFakeOpenAi({ promptCache: true }));
    const short = [{ role: 'user', content: 'hello' }];
    await chat(fake, short);
    expect((await chat(fake, short))['prompt_tokens_details']).toEqual({ cached_tokens: 0 });
  });

  it('counts a streamed answer’s usage and a Responses request the same way', async () => {
    const fake = await started(startFakeOpenAi({ promptCache: true }));
    await chat(fake, turn1);
    const stream = await post(
      `${fake.url}/v1/chat/completions`,
      { model: 'gpt-4o', messages: turn2, stream: true },
      { authorization: 'Bearer sk-one' },
    );
    const events = (await stream.text()).split('\n\n').filter((event) => event.startsWith('data: {'));
    const last = JSON.parse(events.at(-1)!.slice('data: '.length)) as { usage: Record<string, unknown> };
    expect(last.usage['prompt_tokens_details']).toEqual({
      cached_tokens: Math.floor(tokensOf(turn1) / 128) * 128,
    });

    const respond = async (input: unknown[]) => {
      const answer = await post(
        `${fake.url}/v1/responses`,
        { model: 'gpt-4o', instructions: SYSTEM, input },
        { authorization: 'Bearer sk-one' },
      );
      return ((await answer.json()) as { usage: Record<string, unknown> }).usage;
    };
    const first = [{ role: 'user', content: 'First question' }];
    await respond(first);
    const usage = await respond([...first, { role: 'user', content: 'Second question' }]);
    expect(usage['input_tokens_details']).toEqual({
      cached_tokens: Math.floor(tokensOf([SYSTEM, ...first]) / 128) * 128,
    });
  });

  it('keeps the fixed usage figures when the cache is off', async () => {
    const fake = await started(startFakeOpenAi());
    await chat(fake, turn1);
    expect(await chat(fake, turn2)).toEqual({
      prompt_tokens: 11,
      completion_tokens: 7,
      total_tokens: 18,
      prompt_tokens_details: { cached_tokens: 2 },
    });
  });
});

describe('fake Anthropic with promptCache', () => {
  it('reports cache reads apart from input tokens, whole and streamed', async () => {
    const fake = await started(startFakeAnthropic({ promptCache: true }));
    const message = async (messages: unknown[], stream = false) =>
      post(
        `${fake.url}/v1/messages`,
        { model: 'claude-sonnet-4-5', system: SYSTEM, messages, max_tokens: 64, stream },
        { 'x-api-key': 'sk-ant-one', 'anthropic-version': '2023-06-01' },
      );
    const first = turn1.slice(1);
    const second = turn2.slice(1);
    const whole = async (messages: unknown[]) =>
      ((await (await message(messages)).json()) as { usage: Record<string, unknown> }).usage;
    expect(await whole(first)).toEqual({
      input_tokens: tokensOf([SYSTEM, ...first]),
      output_tokens: 6,
      cache_read_input_tokens: 0,
    });
    const cached = tokensOf([SYSTEM, ...first]);
    expect(await whole(second)).toEqual({
      input_tokens: tokensOf([SYSTEM, ...second]) - cached,
      output_tokens: 6,
      cache_read_input_tokens: cached,
    });
    const streamed = await (await message(second, true)).text();
    const start = streamed.split('\n\n').find((event) => event.startsWith('event: message_start'))!;
    const data = JSON.parse(start.split('\ndata: ')[1]!) as { message: { usage: Record<string, unknown> } };
    // The whole second turn was served once: now all of it is cached.
    expect(data.message.usage['cache_read_input_tokens']).toBe(tokensOf([SYSTEM, ...second]));
    expect(data.message.usage['input_tokens']).toBe(0);
  });
});

describe('FakePromptCache', () => {
  it('forgets the least recently used prefix beyond its capacity', () => {
    const cache = new FakePromptCache({ minimumTokens: 1, capacity: 2 });
    cache.read('k', ['aaaa']);
    cache.read('k', ['bbbb']);
    expect(cache.read('k', ['aaaa']).cachedTokens).toBe(2);
    cache.read('k', ['cccc']);
    // aaaa was used after bbbb: bbbb went.
    expect(cache.read('k', ['bbbb']).cachedTokens).toBe(0);
    expect(cache.read('k', ['cccc']).cachedTokens).toBe(2);
  });
});
