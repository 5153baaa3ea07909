import {
  checkOutboundUrl,
  type Logger,
  type McpClientConfig,
  type McpClientState,
  OUTBOUND_REFUSED_CODE,
  type OutboundPolicy,
  redactText,
  urlSecrets,
} from '@gw/shared';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport, SseError } from '@modelcontextprotocol/sdk/client/sse.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import {
  StreamableHTTPClientTransport,
  StreamableHTTPError,
} from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { FetchLike, Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ErrorCode, McpError, ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import type { McpToolDefinition } from './mcp-records.ts';
import type { ToolResult } from './mcp-runner-service.ts';
import { Semaphore } from './semaphore.ts';

export interface McpConnectionOptions {
  config: McpClientConfig;
  connectTimeoutMs: number;
  /** Calls sent to the server at once; more wait for a slot (their time counts against their timeout). */
  maxConcurrency: number;
  logger: Logger;
  /** Told after every change of state, error or tools. */
  onChange: (connection: McpConnection) => void;
  /**
   * Where the values of a stdio client's `envs` come from: the runner's environment, handed over by its main.
   * Without one, a stdio server gets only the MCP SDK's minimal set.
   */
  environment?: NodeJS.ProcessEnv;
  /** Reconnect delays: `initialMs`, doubled after each failed attempt, at most `maxMs`. */
  backoff?: { initialMs: number; maxMs: number };
  /**
   * The `fetch` of http and sse clients: the runner's, whose every connection passes the outbound address policy
   * (docs/network.md). The global fetch when absent (unit tests).
   */
  fetch?: FetchLike | undefined;
  /** The policy `fetch` applies, checked once more before each connection for a plain refusal message. */
  outbound?: OutboundPolicy | undefined;
}

/** A call that produced no tool result: it timed out, or the transport failed (the only retryable kind). */
export class ToolCallError extends Error {
  readonly kind: 'timeout' | 'transport';

  constructor(kind: 'timeout' | 'transport', message: string) {
    super(message);
    this.name = 'ToolCallError';
    this.kind = kind;
  }
}

const STDERR_TAIL = 1_000;
const CLIENT_INFO = { name: 'gw-mcp-runner', version: '1.0.0' };

/**
 * The environment of a stdio server: only the variables its config names in `envs` (from the runner's own
 * environment), on top of the MCP SDK's minimal inherited set (HOME, LOGNAME, PATH, SHELL, TERM, USER on
 * POSIX), which it always adds so that commands can be found. Nothing else of the runner's environment
 * (Redis URL, admin token, provider keys) reaches the server.
 */
function stdioEnvironment(names: string[], environment: NodeJS.ProcessEnv): Record<string, string> {
  const passed: Record<string, string> = {};
  for (const name of names) {
    const value = environment[name];
    if (value !== undefined) passed[name] = value;
  }
  return passed;
}

/** What identifies the server: a change of it means a new connection; filter edits keep the connection. */
function connectionKey(config: McpClientConfig): string {
  return JSON.stringify([
    config.connection_type,
    config.connection_string ?? null,
    config.stdio_config ?? null,
  ]);
}

/**
 * One client's connection to its MCP server, kept alive by this runner.
 *
 * States (docs/mcp.md): `connecting` → `connected` when the handshake and the tool list succeed, or `error`
 * when they fail. `connected` → `error` when the transport closes or fails (the server crashed, the remote
 * went away). From `error` a reconnect is attempted after a backoff (0.5 s, doubling, at most 30 s), or at
 * once on request. `disconnected` is final: the client was removed or the runner stops.
 */
export class McpConnection {
  state: McpClientState = 'connecting';
  error: string | undefined;
  tools: McpToolDefinition[] = [];
  config: McpClientConfig;

  private readonly options: McpConnectionOptions;
  private readonly slots: Semaphore;
  private client: Client | undefined;
  /** Bumped by every new attempt and by close: callbacks of an older attempt are ignored. */
  private generation = 0;
  private failures = 0;
  private retryTimer: NodeJS.Timeout | undefined;
  private stderrTail = '';
  private readonly stateWaiters = new Set<() => void>();

  constructor(options: McpConnectionOptions) {
    this.options = options;
    this.config = options.config;
    this.slots = new Semaphore(options.maxConcurrency);
  }

  get name(): string {
    return this.config.name;
  }

  /** Starts connecting (in the background). */
  start(): void {
    void this.connect();
  }

  /** A new connection now, dropping the current one (admin's reconnect, or a changed server). */
  reconnect(): void {
    if (this.state === 'disconnected') return;
    this.failures = 0;
    void this.connect();
  }

  /** Takes a new config: a different server reconnects; filter edits apply at once. */
  update(config: McpClientConfig): void {
    const changed = connectionKey(config) !== connectionKey(this.config);
    this.config = config;
    if (changed) {
      this.tools = [];
      this.reconnect();
    } else this.options.onChange(this);
  }

  async close(): Promise<void> {
    this.generation += 1;
    clearTimeout(this.retryTimer);
    const client = this.client;
    this.client = undefined;
    this.setState('disconnected', undefined);
    await client?.close().catch(() => {});
  }

  /**
   * Calls a tool within `timeoutMs` (waiting for a slot and for a connection in progress included). Resolves
   * with the tool's result, also when the tool failed (`isError`); rejects with a ToolCallError otherwise.
   */
  async call(tool: string, args: Record<string, unknown>, timeoutMs: number): Promise<ToolResult> {
    const deadline = Date.now() + timeoutMs;
    const timedOut = () =>
      new ToolCallError(
        'timeout',
        `tool '${tool}' of MCP client '${this.name}' did not answer within ${timeoutMs} ms`,
      );
    let release: () => void;
    try {
      release = await this.slots.acquire(AbortSignal.timeout(timeoutMs));
    } catch {
      throw timedOut();
    }
    try {
      const generation = this.generation;
      const client = await this.ready(deadline);
      const remaining = deadline - Date.now();
      if (remaining <= 0) throw timedOut();
      try {
        const result = await client.callTool({ name: tool, arguments: args }, undefined, {
          timeout: remaining,
        });
        return toToolResult(result);
      } catch (error) {
        if (error instanceof McpError) {
          if (error.code === ErrorCode.RequestTimeout) throw timedOut();
          if (error.code !== ErrorCode.ConnectionClosed) {
            // The server answered with a JSON-RPC error: that is its answer to the call.
            return { content: error.message, isError: true };
          }
        }
        const message = `MCP client '${this.name}' lost its connection during the call: ${this.describe(error)}${this.stderrSuffix()}`;
        this.lost(generation, message);
        throw new ToolCallError('transport', message);
      }
    } finally {
      release();
    }
  }

  /** The connected client, waiting while a connection is in progress; a transport error when there is none. */
  private async ready(deadline: number): Promise<Client> {
    while (true) {
      if (this.state === 'connected' && this.client) return this.client;
      if (this.state !== 'connecting') {
        throw new ToolCallError(
          'transport',
          `MCP client '${this.name}' is ${this.state}${this.error ? `: ${this.error}` : ''}`,
        );
      }
      const remaining = deadline - Date.now();
      if (remaining <= 0) {
        throw new ToolCallError('timeout', `MCP client '${this.name}' is still connecting`);
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, remaining);
        function done() {
          clearTimeout(timer);
          resolve();
        }
        this.stateWaiters.add(done);
      });
    }
  }

  private async connect(): Promise<void> {
    clearTimeout(this.retryTimer);
    const generation = ++this.generation;
    const previous = this.client;
    this.client = undefined;
    this.setState('connecting', undefined);
    await previous?.close().catch(() => {});
    if (generation !== this.generation) return;
    this.stderrTail = '';
    const client = new Client(CLIENT_INFO, { capabilities: {} });
    try {
      const { outbound } = this.options;
      if (outbound && this.config.connection_string && this.config.connection_type !== 'stdio')
        await checkOutboundUrl(this.config.connection_string, outbound);
      if (generation !== this.generation) return;
      const transport = this.createTransport();
      client.onclose = () => {
        if (generation === this.generation && this.client === client) {
          this.lost(generation, `the connection closed${this.stderrSuffix()}`);
        }
      };
      client.onerror = (error) =>
        this.options.logger.debug(
          { error: this.redact(describe(error)), client: this.name },
          'MCP transport reported an error',
        );
      client.setNotificationHandler(ToolListChangedNotificationSchema, async () => {
        if (generation !== this.generation) return;
        try {
          const tools = await listAllTools(client, this.options.connectTimeoutMs);
          if (generation !== this.generation) return;
          this.tools = tools;
          this.options.onChange(this);
        } catch (error) {
          this.options.logger.warn(
            { error: this.describe(error), client: this.name },
            'refreshing the tool list failed',
          );
        }
      });
      await withTimeout(
        client.connect(transport, { timeout: this.options.connectTimeoutMs }),
        this.options.connectTimeoutMs,
        'the handshake',
      );
      const tools = client.getServerCapabilities()?.tools
        ? await listAllTools(client, this.options.connectTimeoutMs)
        : [];
      if (generation !== this.generation) {
        await client.close().catch(() => {});
        return;
      }
      this.client = client;
      this.tools = tools;
      this.failures = 0;
      this.setState('connected', undefined);
    } catch (error) {
      await client.close().catch(() => {});
      if (generation !== this.generation) return;
      this.setState('error', `connect failed: ${this.describe(error)}${this.stderrSuffix()}`);
      this.scheduleReconnect();
    }
  }

  /** The connection of `generation` failed: error state, then a reconnect after the backoff. */
  private lost(generation: number, message: string): void {
    if (generation !== this.generation || this.state === 'disconnected') return;
    if (this.state === 'error') return;
    const client = this.client;
    this.client = undefined;
    this.generation += 1;
    this.setState('error', message);
    void client?.close().catch(() => {});
    this.scheduleReconnect();
  }

  private scheduleReconnect(): void {
    const backoff = this.options.backoff ?? { initialMs: 500, maxMs: 30_000 };
    const delay = Math.min(backoff.initialMs * 2 ** this.failures, backoff.maxMs);
    this.failures += 1;
    clearTimeout(this.retryTimer);
    this.retryTimer = setTimeout(() => void this.connect(), delay);
    this.retryTimer.unref();
  }

  private setState(state: McpClientState, error: string | undefined): void {
    this.state = state;
    this.error = error;
    if (state === 'error') this.options.logger.warn({ client: this.name, error }, 'MCP client error');
    for (const waiter of [...this.stateWaiters]) waiter();
    this.stateWaiters.clear();
    this.options.onChange(this);
  }

  private createTransport(): Transport {
    const { config } = this;
    if (config.connection_type === 'stdio') {
      const stdio = config.stdio_config!;
      const transport = new StdioClientTransport({
        command: stdio.command,
        args: stdio.args,
        env: stdioEnvironment(stdio.envs, this.options.environment ?? {}),
        stderr: 'pipe',
      });
      transport.stderr?.on('data', (chunk: Buffer) => {
        this.stderrTail = (this.stderrTail + chunk.toString('utf8')).slice(-STDERR_TAIL);
      });
      return transport;
    }
    // fetch refuses a URL with user-info: its credentials go as Basic authorization instead.
    const url = new URL(config.connection_string!);
    const requestInit: RequestInit = {};
    if (url.username || url.password) {
      const credentials = `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`;
      requestInit.headers = { authorization: `Basic ${Buffer.from(credentials).toString('base64')}` };
      url.username = '';
      url.password = '';
    }
    const fetch = this.options.fetch;
    return config.connection_type === 'sse'
      ? new SSEClientTransport(url, { requestInit, ...(fetch && { fetch }) })
      : new StreamableHTTPClientTransport(url, { requestInit, ...(fetch && { fetch }) });
  }

  private stderrSuffix(): string {
    const lines = this.stderrTail.trim().split('\n');
    const last = lines[lines.length - 1]?.trim();
    return last ? ` (stderr: ${this.redact(last).slice(0, 300)})` : '';
  }

  /**
   * An error as reports and callers see it: without the client's credentials, and for an http or sse client in
   * fixed words and a status only, never the remote server's own text (a hostile URL would otherwise read back
   * what an internal address answered).
   */
  private describe(error: unknown): string {
    if (this.config.connection_type !== 'stdio') return describeRemoteFailure(error);
    return this.redact(describe(error));
  }

  /**
   * A text without the credentials of this client's config (its URL's password and secret query values, the
   * values of the variables passed to a stdio server) or anything shaped like a key: servers and transports
   * echo them in errors.
   */
  private redact(text: string): string {
    const passed = this.config.stdio_config
      ? Object.values(stdioEnvironment(this.config.stdio_config.envs, this.options.environment ?? {}))
      : [];
    return redactText(text, [...urlSecrets(this.config.connection_string), ...passed]);
  }
}

async function listAllTools(client: Client, timeoutMs: number): Promise<McpToolDefinition[]> {
  const tools: McpToolDefinition[] = [];
  let cursor: string | undefined;
  do {
    const page = await client.listTools(cursor ? { cursor } : undefined, { timeout: timeoutMs });
    for (const tool of page.tools) {
      const definition: McpToolDefinition = { name: tool.name, inputSchema: tool.inputSchema };
      if (tool.description !== undefined) definition.description = tool.description;
      tools.push(definition);
    }
    cursor = page.nextCursor;
  } while (cursor);
  return tools;
}

/**
 * A tool result as the tool message's content: text parts joined by newlines; other parts (images,
 * resources) as their JSON; a result with only structured content as that JSON.
 */
function toToolResult(result: Record<string, unknown>): ToolResult {
  const isError = result['isError'] === true;
  const parts = result['content'];
  if (Array.isArray(parts) && parts.length > 0) {
    const content = parts
      .map((part: { type?: string; text?: unknown }) =>
        part.type === 'text' && typeof part.text === 'string' ? part.text : JSON.stringify(part),
      )
      .join('\n');
    return { content, isError };
  }
  if (result['structuredContent'] !== undefined)
    return { content: JSON.stringify(result['structuredContent']), isError };
  if (result['toolResult'] !== undefined) return { content: JSON.stringify(result['toolResult']), isError };
  return { content: '', isError };
}

/** The causes of an error, outermost first (a few levels: fetch wraps a socket's error in a TypeError). */
function causes(error: unknown): unknown[] {
  const chain: unknown[] = [];
  for (let current = error; current !== undefined && chain.length < 5; ) {
    chain.push(current);
    current = current instanceof Error ? (current as { cause?: unknown }).cause : undefined;
  }
  return chain;
}

/**
 * What went wrong with an http or sse server, in gw's words: the outbound policy's refusal, an HTTP status, a
 * system error code, or the kind of failure. No text of the server's answer is kept.
 */
function describeRemoteFailure(error: unknown): string {
  const chain = causes(error);
  const refused = chain.find(
    (item): item is Error => (item as { code?: unknown })?.code === OUTBOUND_REFUSED_CODE,
  );
  if (refused) return refused.message;
  for (const item of chain) {
    if (item instanceof StreamableHTTPError || item instanceof SseError) {
      const status = item.code;
      if (typeof status === 'number' && status >= 100) return `the server answered HTTP ${status}`;
      return item instanceof SseError
        ? 'could not open the event stream'
        : 'the server answered something that is not MCP';
    }
    if (item instanceof McpError) {
      if (item.code === ErrorCode.RequestTimeout) return 'the server did not answer in time';
      if (item.code === ErrorCode.ConnectionClosed) return 'the connection closed';
      return `the server answered JSON-RPC error ${item.code}`;
    }
    if (item instanceof TimeoutError) return item.message;
    const code = (item as { code?: unknown })?.code;
    if (typeof code === 'string' && /^[A-Z0-9_]{2,40}$/.test(code))
      return `could not reach the server (${code})`;
  }
  if (chain.some((item) => item instanceof SyntaxError || (item as Error)?.name === 'ZodError'))
    return 'the server answered something that is not MCP';
  return 'the connection to the server failed';
}

/** gw's own deadline on a connection step (its message is gw's). */
class TimeoutError extends Error {
  override name = 'TimeoutError';
}

function describe(error: unknown): string {
  if (error instanceof Error) {
    const cause = (error as { cause?: unknown }).cause;
    return cause instanceof Error ? `${error.message} (${cause.message})` : error.message;
  }
  return String(error);
}

function withTimeout<T>(promise: Promise<T>, timeoutMs: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise,
    new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new TimeoutError(`${what} did not finish within ${timeoutMs} ms`)),
        timeoutMs,
      );
    }),
  ]).finally(() => clearTimeout(timer));
}
