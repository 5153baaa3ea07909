// Token counts gw estimates itself reach no provider, but they are still governed: required headers and
// the caller's key are checked, so a gateway that demands keys does not answer anonymous callers.
import type { LaunchedGateway } from '@gw/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { post } from '../support/http.ts';
import { MODES } from './surface-gateway.ts';

const KEY = 'sk-gw-counts00000000000000000000000000000000000';

describe.each(MODES)('estimated token counts are governed (%s)', (_mode, start) => {
  let gateway: LaunchedGateway;
  beforeAll(async () => {
    gateway = await start({
      client: { enforce_virtual_keys: true },
      providers: {
        openai: { keys: [{ value: 'sk-upstream' }], network_config: { base_url: 'http://127.0.0.1:9' } },
      },
      governance: {
        virtual_keys: [{ name: 'counts', value: KEY, provider_configs: [{ provider: 'openai' }] }],
      },
    });
  });
  afterAll(async () => {
    await gateway?.close();
  });

  const anthropic = {
    model: 'openai/gpt-4o',
    messages: [{ role: 'user', content: 'How many tokens is this?' }],
  };
  const genai = { contents: [{ role: 'user', parts: [{ text: 'How many tokens is this?' }] }] };

  it('refuses an anonymous caller in the surface’s own error shape', async () => {
    const counted = await post(`${gateway.url}/anthropic/v1/messages/count_tokens`, anthropic);
    expect(counted.status).toBe(401);
    expect(counted.body).toMatchObject({ type: 'error', error: { type: 'authentication_error' } });
    const genaiCount = await post(`${gateway.url}/genai/v1beta/models/openai%2Fgpt-4o:countTokens`, genai);
    expect(genaiCount.status).toBe(401);
    expect(genaiCount.body.error.code).toBe(401);
  });

  it('answers a caller with a key', async () => {
    const counted = await post(`${gateway.url}/anthropic/v1/messages/count_tokens`, anthropic, {
      headers: { 'x-api-key': KEY },
    });
    expect(counted.status).toBe(200);
    expect(counted.body.input_tokens).toBeGreaterThan(0);
    const genaiCount = await post(`${gateway.url}/genai/v1beta/models/openai%2Fgpt-4o:countTokens`, genai, {
      headers: { 'x-goog-api-key': KEY },
    });
    expect(genaiCount.status).toBe(200);
    expect(genaiCount.body.totalTokens).toBeGreaterThan(0);
  });
});
