// Codex itself (`codex exec`, the npm package's own binary, installed in this folder by `pnpm run clients`)
// against gw's `/openai/v1` surface, in both modes (issue 27), answered by a fake OpenAI Responses API (issue
// 10): its default tools (custom and built-in ones, not only functions), reasoning and prompt caching reach
// OpenAI as Codex sent them, and OpenAI's answer reaches Codex as OpenAI sent it; and served by Anthropic
// through the translation.
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { type FakeUpstream, type LaunchedGateway, responseStream, startFakeUpstream } from '@gw/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  closeFakes,
  MODES,
  PROVIDER_KEYS,
  type SurfaceFakes,
  startFakes,
  surfaceConfig,
  VIRTUAL_KEY,
} from '../surfaces/surface-gateway.ts';

const run = promisify(execFile);
const CODEX = fileURLToPath(new URL('./node_modules/.bin/codex', import.meta.url));

interface SentResponses {
  model: string;
  stream: boolean;
  tools?: Array<{ type: string; name?: string }>;
  reasoning?: unknown;
  prompt_cache_key?: string;
}

describe.each(MODES)('Codex → /openai/v1 (%s)', (_mode, start) => {
  let fakes: SurfaceFakes;
  let gateway: LaunchedGateway;
  let home: string;

  let openai: FakeUpstream;

  beforeAll(async () => {
    fakes = await startFakes();
    // OpenAI's Responses API and models list: Codex reads both.
    openai = await startFakeUpstream([
      {
        path: /^\/v1\/responses$/,
        answer: () => ({ sse: responseStream({ model: 'gpt-5-codex', text: 'Hello from gw' }) }),
      },
      { path: /^\/v1\/models/, answer: () => ({ json: { object: 'list', data: [] } }) },
    ]);
    gateway = await start(surfaceConfig({ ...fakes, openai: openai as SurfaceFakes['openai'] }));
    home = await mkdtemp(join(tmpdir(), 'gw-codex-home-'));
  });
  afterAll(async () => {
    await gateway?.close();
    await Promise.all([closeFakes(fakes), openai?.close()]);
    if (home) await rm(home, { recursive: true, force: true });
  });

  /** Runs `codex exec` with gw as its model provider (and `settings`, `-c` pairs) and answers what it printed. */
  async function codexExec(model: string, settings: string[] = []): Promise<string> {
    const provider = `{ name = "gw", base_url = "${gateway.url}/openai/v1", env_key = "GW_VIRTUAL_KEY", wire_api = "responses" }`;
    const codex = run(
      CODEX,
      [
        'exec',
        '--skip-git-repo-check',
        '-c',
        'model_provider="gw"',
        '-c',
        `model_providers.gw=${provider}`,
        ...settings.flatMap((setting) => ['-c', setting]),
        '-m',
        model,
        'Say hello',
      ],
      {
        cwd: home,
        timeout: 60_000,
        env: { PATH: process.env['PATH'] ?? '', HOME: home, CODEX_HOME: home, GW_VIRTUAL_KEY: VIRTUAL_KEY },
      },
    );
    // `codex exec` reads more of the prompt from a stdin that is not a terminal, until it ends.
    codex.child.stdin?.end();
    return (await codex).stdout;
  }

  it('answers `codex exec` with its default tools, reasoning and caching intact upstream', {
    timeout: 90_000,
  }, async () => {
    expect(await codexExec('gpt-5-codex')).toContain('Hello from gw');

    const sent = openai.requests.filter((request) => request.path === '/v1/responses');
    expect(sent.length).toBeGreaterThan(0);
    const body = sent[sent.length - 1]!.body as SentResponses;
    expect(sent[sent.length - 1]!.headers.authorization).toBe(`Bearer ${PROVIDER_KEYS.openai}`);
    expect(body).toMatchObject({ model: 'gpt-5-codex', stream: true });
    // Codex's tools are not only functions: gw used to refuse every one of the others.
    expect(body.tools?.some((tool) => tool.type !== 'function')).toBe(true);
    expect(body.reasoning).toBeDefined();
    expect(typeof body.prompt_cache_key).toBe('string');
  });

  // OpenAI's own tools (web search, the sub-agents' namespace) run only at OpenAI: for another provider Codex is
  // set up without them, as docs/surfaces.md says.
  it('answers `codex exec` served by Anthropic through the Responses translation', {
    timeout: 90_000,
  }, async () => {
    const before = fakes.anthropic.requests.length;
    const stdout = await codexExec('anthropic/claude-opus-4-7', [
      'web_search="disabled"',
      'features.multi_agent=false',
    ]);
    expect(stdout).toContain('Hello Claude');
    const sent = fakes.anthropic.requests.slice(before);
    expect(sent.length).toBeGreaterThan(0);
    const body = sent.at(-1)!.body as { model: string; stream: boolean; tools?: Array<{ name: string }> };
    expect(body).toMatchObject({ model: 'claude-opus-4-7', stream: true });
    expect(body.tools?.map((tool) => tool.name)).toContain('exec_command');
  });
});
