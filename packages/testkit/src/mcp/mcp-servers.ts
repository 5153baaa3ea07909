import { type ChildProcess, spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { connect } from 'node:net';
import { fileURLToPath } from 'node:url';
import { freePort } from '../gateway-launcher.ts';
import { scaled } from '../time-scale.ts';
import { waitFor } from '../wait-for.ts';

const require = createRequire(import.meta.url);

/** Entry files of the real MCP servers from npm (root devDependencies). */
export const MCP_SERVER_ENTRIES = {
  everything: require.resolve('@modelcontextprotocol/server-everything/dist/index.js'),
  memory: require.resolve('@modelcontextprotocol/server-memory/dist/index.js'),
  filesystem: require.resolve('@modelcontextprotocol/server-filesystem/dist/index.js'),
} as const;

/** The fixture stdio server (crash, hang, fail, env, add-tool…); run it with `node`. */
export const FIXTURE_MCP_SERVER = fileURLToPath(new URL('./fixture-mcp-server.ts', import.meta.url));
const LOOPBACK_ONLY = fileURLToPath(new URL('./loopback-only.ts', import.meta.url));

/** A stdio client config running one of the servers with this Node. */
export function stdioServer(entry: string, args: string[] = [], envs: string[] = []) {
  return { command: process.execPath, args: [entry, ...args], envs };
}

export interface RunningMcpServer {
  /** The URL a client connects to. */
  url: string;
  port: number;
  process: ChildProcess;
  close(): Promise<void>;
}

/**
 * Starts server-everything over `sse` or `streamableHttp` on a free loopback port. It would listen on every
 * interface; the loopback-only preload binds it to 127.0.0.1.
 */
export async function startEverythingServer(transport: 'sse' | 'streamableHttp'): Promise<RunningMcpServer> {
  const port = await freePort();
  const child = spawn(
    process.execPath,
    ['--import', LOOPBACK_ONLY, MCP_SERVER_ENTRIES.everything, transport],
    {
      env: { PATH: process.env['PATH'] ?? '', PORT: String(port) },
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  let output = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    output = (output + chunk.toString('utf8')).slice(-4_000);
  });
  const started = await waitFor(
    async () => (child.exitCode !== null ? 'exited' : (await accepts(port)) && 'listening'),
    { timeoutMs: 10_000 },
  ).catch(() => 'timed out');
  if (started !== 'listening') {
    child.kill('SIGKILL');
    throw new Error(`server-everything ${transport} did not start (${started}):\n${output}`);
  }
  const path = transport === 'sse' ? '/sse' : '/mcp';
  return {
    url: `http://127.0.0.1:${port}${path}`,
    port,
    process: child,
    close: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
        setTimeout(() => child.kill('SIGKILL'), scaled(2_000)).unref();
      }),
  };
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ port, host: '127.0.0.1' });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}
