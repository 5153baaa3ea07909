// Claude Code itself (`claude -p`, the npm package's own binary, installed in this folder by `pnpm run
// clients`) against gw's `/anthropic` surface, in both modes (issue 27), answered by a fake Anthropic upstream (issue 10):
// a plain answer, a tool round trip with thinking on (its signed thinking block must come back to Anthropic as
// it left it), an image read (the picture inside the tool result), and the same client served by OpenAI
// through a model alias.
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { anthropicStream, type LaunchedGateway } from '@gw/testkit';
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
const CLAUDE = fileURLToPath(new URL('./node_modules/.bin/claude', import.meta.url));

const event = (data: { type: string } & Record<string, unknown>) =>
  `event: ${data.type}\ndata: ${JSON.stringify(data)}\n\n`;

/** A streamed answer that thinks (signed), then calls one of Claude Code's tools. */
function thinkingToolUse(
  model: string,
  call: { id: string; name: string; input: Record<string, unknown> } = {
    id: 'toolu_cc_1',
    name: 'Bash',
    input: { command: 'echo gw-was-here', description: 'Print' },
  },
): string[] {
  return [
    event({
      type: 'message_start',
      message: {
        id: 'msg_cc_1',
        type: 'message',
        role: 'assistant',
        model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { input_tokens: 2_000, output_tokens: 1 },
      },
    }),
    event({
      type: 'content_block_start',
      index: 0,
      content_block: { type: 'thinking', thinking: '', signature: '' },
    }),
    event({
      type: 'content_block_delta',
      index: 0,
      delta: { type: 'thinking_delta', thinking: 'I will run echo.' },
    }),
    event({
      type: 'content_block_delta',
      index: 0,
      delta: { type: 'signature_delta', signature: 'SIG-cc-1' },
    }),
    event({ type: 'content_block_stop', index: 0 }),
    event({
      type: 'content_block_start',
      index: 1,
      content_block: { type: 'tool_use', id: call.id, name: call.name, input: {} },
    }),
    event({
      type: 'content_block_delta',
      index: 1,
      delta: {
        type: 'input_json_delta',
        partial_json: JSON.stringify(call.input),
      },
    }),
    event({ type: 'content_block_stop', index: 1 }),
    event({
      type: 'message_delta',
      delta: { stop_reason: 'tool_use', stop_sequence: null },
      usage: { output_tokens: 30 },
    }),
    event({ type: 'message_stop' }),
  ];
}

interface SentMessages {
  model: string;
  messages: Array<{ role: string; content: unknown }>;
  tools?: Array<{ name: string }>;
  thinking?: unknown;
}

describe.each(MODES)('Claude Code → /anthropic (%s)', (_mode, start) => {
  let fakes: SurfaceFakes;
  let gateway: LaunchedGateway;
  let home: string;

  beforeAll(async () => {
    fakes = await startFakes();
    // One gateway per mode: its alias serves the `claude-gw-…` names with OpenAI (the last case).
    const config = surfaceConfig(fakes);
    gateway = await start({
      ...config,
      governance: {
        ...config.governance,
        model_aliases: [{ name: 'claude-gw-*', targets: [{ model: 'openai/gpt-4o' }] }],
      },
    });
    home = await mkdtemp(join(tmpdir(), 'gw-claude-home-'));
  });
  afterAll(async () => {
    await gateway?.close();
    await closeFakes(fakes);
    if (home) await rm(home, { recursive: true, force: true });
  });

  /** Claude Code's environment: gw as its Anthropic, the virtual key as its API key, no traffic elsewhere. */
  const environment = () => ({
    PATH: process.env['PATH'] ?? '',
    HOME: home,
    ANTHROPIC_BASE_URL: `${gateway.url}/anthropic`,
    ANTHROPIC_API_KEY: VIRTUAL_KEY,
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    DISABLE_AUTOUPDATER: '1',
    DISABLE_TELEMETRY: '1',
    DISABLE_ERROR_REPORTING: '1',
  });
  const claude = (prompt: string, extra: string[] = []) =>
    run(CLAUDE, ['-p', prompt, '--output-format', 'json', ...extra], {
      cwd: home,
      timeout: 60_000,
      env: environment(),
    });

  it('answers a prompt in print mode, with gw’s key upstream and Claude Code’s request intact', async () => {
    const { stdout } = await claude('Say hello');
    const result = JSON.parse(stdout) as { is_error: boolean; result: string };
    expect(result.is_error).toBe(false);
    expect(result.result).toContain('Hello');
    const main = fakes.anthropic.requests
      .filter((request) => request.path.startsWith('/v1/messages') && !request.path.includes('count_tokens'))
      .map((request) => request);
    expect(main.length).toBeGreaterThan(0);
    for (const request of main) {
      expect(request.headers['x-api-key']).toBe(PROVIDER_KEYS.anthropic);
      expect(JSON.stringify(request.headers)).not.toContain(VIRTUAL_KEY);
    }
    // Claude Code's cache markers reach Anthropic (a turn costs about 10x without cache reads).
    expect(main.some((request) => JSON.stringify(request.body).includes('"cache_control"'))).toBe(true);
  });

  it('runs a tool round trip with thinking on: the signed thinking block goes back to Anthropic as it came', async () => {
    const answered: string[] = [];
    fakes.anthropic.enqueue({
      respond: async (response) => {
        response.writeHead(200, { 'content-type': 'text/event-stream' });
        for (const piece of thinkingToolUse('claude-sonnet-4-5')) {
          answered.push(piece);
          response.write(piece);
        }
        response.end();
      },
    });
    fakes.anthropic.enqueue({
      sse: anthropicStream({ model: 'claude-sonnet-4-5', pieces: ['Done: gw-was-here'] }),
    });
    const before = fakes.anthropic.requests.length;
    const { stdout } = await claude('Run echo gw-was-here', [
      '--model',
      'claude-sonnet-4-5',
      '--allowedTools',
      'Bash(echo:*)',
      '--max-turns',
      '3',
    ]);
    const result = JSON.parse(stdout) as { is_error: boolean; result: string };
    expect(result.is_error).toBe(false);
    expect(result.result).toContain('gw-was-here');

    const turns = fakes.anthropic.requests
      .slice(before)
      .map((request) => request.body as SentMessages)
      .filter((body) =>
        body?.messages?.some((message) => JSON.stringify(message.content).includes('toolu_cc_1')),
      );
    expect(turns.length).toBeGreaterThan(0);
    const followUp = turns[turns.length - 1]!;
    const assistant = followUp.messages.find((message) => message.role === 'assistant')!;
    expect(assistant.content).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ type: 'thinking', thinking: 'I will run echo.', signature: 'SIG-cc-1' }),
        expect.objectContaining({ type: 'tool_use', id: 'toolu_cc_1', name: 'Bash' }),
      ]),
    );
    const toolResult = JSON.stringify(followUp.messages[followUp.messages.length - 1]);
    expect(toolResult).toContain('gw-was-here');
  });

  it('reads an image: the picture goes back to Anthropic inside the tool result', async () => {
    // A 1×1 PNG.
    const png = Buffer.from(
      'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==',
      'base64',
    );
    const file = join(home, 'shot.png');
    await writeFile(file, png);
    fakes.anthropic.enqueue({
      sse: thinkingToolUse('claude-sonnet-4-5', {
        id: 'toolu_cc_img',
        name: 'Read',
        input: { file_path: file },
      }),
    });
    fakes.anthropic.enqueue({
      sse: anthropicStream({ model: 'claude-sonnet-4-5', pieces: ['A single pixel.'] }),
    });
    const before = fakes.anthropic.requests.length;
    const { stdout } = await claude('What is in shot.png?', [
      '--model',
      'claude-sonnet-4-5',
      '--max-turns',
      '3',
    ]);
    expect((JSON.parse(stdout) as { result: string }).result).toContain('A single pixel.');
    const followUp = fakes.anthropic.requests
      .slice(before)
      .map((request) => JSON.stringify(request.body))
      .find((body) => body.includes('toolu_cc_img') && body.includes('tool_result'));
    expect(followUp).toBeDefined();
    expect(followUp).toContain('"type":"image"');
    expect(followUp).toContain('"media_type":"image/png"');
  });

  it('is served by another provider through a model alias, its claude-… names unchanged', async () => {
    const before = { openai: fakes.openai.requests.length, anthropic: fakes.anthropic.requests.length };
    const { stdout } = await run(CLAUDE, ['-p', 'Say hello', '--output-format', 'json'], {
      cwd: home,
      timeout: 60_000,
      env: {
        ...environment(),
        ANTHROPIC_MODEL: 'claude-gw-sonnet',
        ANTHROPIC_DEFAULT_SONNET_MODEL: 'claude-gw-sonnet',
        ANTHROPIC_DEFAULT_HAIKU_MODEL: 'claude-gw-haiku',
        ANTHROPIC_SMALL_FAST_MODEL: 'claude-gw-haiku',
      },
    });
    expect((JSON.parse(stdout) as { is_error: boolean }).is_error).toBe(false);
    const sent = fakes.openai.requests
      .slice(before.openai)
      .map((request) => request.body as { model: string });
    expect(sent.length).toBeGreaterThan(0);
    expect(sent.every((body) => body.model === 'gpt-4o')).toBe(true);
    expect(fakes.anthropic.requests.length).toBe(before.anthropic);
  });
});
