// An MCP server that echoes its caller's credentials in its errors (a 401 naming the URL it was asked, a stdio
// server printing its environment): the client's state, the logs and the admin API never carry them.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type Logger, type McpClientConfig, mcpClientConfigSchema } from '@gw/shared';
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

async function failedConnection(config: McpClientConfig, environment: NodeJS.ProcessEnv = {}) {
  const { logger, text } = recordingLogger();
  const connection = new McpConnection({
    config,
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
    expect(error).toContain('no access for /mcp');
    expect(error).toContain('[redacted]');
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
