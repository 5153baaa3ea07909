// An MCP server that echoes its caller's credentials in its errors (a 401 naming the URL it was asked, a stdio
// server printing its environment): the client's state, the logs and the admin API never carry them.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  type Logger,
  type McpClientConfig,
  mcpClientConfigSchema,
  type OutboundPolicy,
  outboundPolicy,
} from '@gw/shared';
import { fetchThrough, outboundAgent } from '@gw/shared/outbound';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { McpConnection } from './mcp-connection.ts';

const PASSWORD = 'hunter2-mcp-password';
const QUERY_SECRET = 'qs-9f8e7d6c5b4a3921';
const ENV_SECRET = 'env-secret-0a1b2c3d4e5f';

/** A logger that keeps every line as JSON text, at every level. */
function recordingLogger() {
  const lines: string[] = [];
  const record = (fields: unknown, message?: string) => {
    lines.push(
      `${JSON.stringify(fields, (_key, value) => (value instanceof Error ? String(value.stack) : value))} ${message ?? ''}`,
    );
  };
  const logger = { trace: record, debug: record, info: record, warn: record, error: record, fatal: record };
  return { logger: logger as unknown as Logger, text: () => lines.join('\n') };
}

async function failedConnection(
  config: McpClientConfig,
  environment: NodeJS.ProcessEnv = {},
  outbound: { fetch?: FetchLike; outbound?: OutboundPolicy } = {},
) {
  const { logger, text } = recordingLogger();
  const connection = new McpConnection({
    config,
    ...outbound,
    connectTimeoutMs: 5_000,
    maxConcurrency: 1,
    logger,
    environment,
    backoff: { initialMs: 60_000, maxMs: 60_000 },
    onChange: () => {},
  });
  connection.start();
  const deadline = Date.now() + 10_000;
  while (connection.state !== 'error' && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  const error = connection.error ?? '';
  await connection.close();
  return { error, logs: text() };
}

describe('MCP client errors carry no credentials', () => {
  let server: Server;
  let port: number;

  beforeAll(async () => {
    // Answers every request 401 with what it was sent: the URL (query included) and the authorization.
    server = createServer((request, response) => {
      response.writeHead(401, { 'content-type': 'application/json' });
      response.end(
        JSON.stringify({
          error: `no access for ${request.url} with ${request.headers.authorization ?? 'none'}`,
        }),
      );
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => new Promise((resolve) => server.close(resolve)));

  it('an HTTP server echoing its URL’s password and secret query value', async () => {
    const config = mcpClientConfigSchema.parse({
      name: 'echoing',
      connection_type: 'http',
      connection_string: `http://gw:${PASSWORD}@127.0.0.1:${port}/mcp?api_key=${QUERY_SECRET}&team=blue`,
    });
    const { error, logs } = await failedConnection(config);
    // The server's own words are not kept at all: a fixed description and its status.
    expect(error).toBe('connect failed: the server answered HTTP 401');
    for (const text of [error, logs]) {
      expect(text).not.toContain(PASSWORD);
      expect(text).not.toContain(QUERY_SECRET);
      // The basic credentials fetch sends for the URL's user-info, echoed back encoded.
      expect(text).not.toContain(Buffer.from(`gw:${PASSWORD}`).toString('base64'));
    }
  });

  it('a stdio server that prints the values it was given before failing', async () => {
    const config = mcpClientConfigSchema.parse({
      name: 'printing',
      connection_type: 'stdio',
      stdio_config: {
        command: process.execPath,
        args: ['-e', 'console.error("starting with " + process.env.SERVICE_TOKEN); process.exit(1)'],
        envs: ['SERVICE_TOKEN'],
      },
    });
    const { error, logs } = await failedConnection(config, { SERVICE_TOKEN: ENV_SECRET });
    expect(error).toContain('starting with [redacted]');
    expect(logs).not.toContain(ENV_SECRET);
  });
});

describe('MCP http clients and the outbound address policy', () => {
  let server: Server;
  let port: number;
  let hits = 0;

  beforeAll(async () => {
    // What an internal service would answer: a body the caller must never read back through gw.
    server = createServer((_request, response) => {
      hits += 1;
      response.writeHead(500, { 'content-type': 'text/plain' });
      response.end('internal-service-secret-body');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => new Promise((resolve) => server.close(resolve)));

  it('reports a remote failure as its status only', async () => {
    const config = mcpClientConfigSchema.parse({
      name: 'internal',
      connection_type: 'http',
      connection_string: `http://127.0.0.1:${port}/`,
    });
    const { error } = await failedConnection(config);
    expect(error).toBe('connect failed: the server answered HTTP 500');
  });

  it('refuses to connect where the policy refuses, before any byte is sent', async () => {
    const policy = outboundPolicy({ allow_loopback: false });
    const agent = outboundAgent(policy);
    for (const [type, host] of [
      ['http', '127.0.0.1'],
      ['sse', '[::ffff:127.0.0.1]'],
      ['http', 'localhost'],
    ] as const) {
      const before = hits;
      const config = mcpClientConfigSchema.parse({
        name: 'internal',
        connection_type: type,
        connection_string: `http://${host}:${port}/`,
      });
      // The agent alone (connect time), then with the check before connecting.
      const atConnect = await failedConnection(config, {}, { fetch: fetchThrough(agent) });
      expect(atConnect.error).not.toContain('internal-service-secret-body');
      expect(hits).toBe(before);
      const { error } = await failedConnection(config, {}, { fetch: fetchThrough(agent), outbound: policy });
      expect(error).toMatch(
        /^connect failed: .* is a loopback address \(allowed only by the config file's network\.allow_loopback\); gw does not call it$/,
      );
      expect(error).not.toContain('internal-service-secret-body');
      expect(hits).toBe(before);
    }
    await agent.close();
  });
});
