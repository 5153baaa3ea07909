import { hostname } from 'node:os';
import {
  GatewayError,
  type Logger,
  type McpClientConfig,
  type McpSettings,
  type OutboundPolicy,
} from '@gw/shared';
import { fetchThrough, outboundAgent } from '@gw/shared/outbound';
import type { ChangeFollower } from '@gw/shared/store';
import { McpConnection, ToolCallError } from './mcp-connection.ts';
import type { McpChange } from './mcp-records.ts';
import type { McpRegistry } from './mcp-registry.ts';
import { type ToolJob, ToolJobFailure, type ToolResult } from './mcp-runner-service.ts';
import { allowedByClientConfig } from './tool-filter.ts';

export interface McpRunnerCoreDependencies {
  registry: McpRegistry;
  logger: Logger;
  settings: Pick<McpSettings, 'tool_timeout_ms' | 'connect_timeout_ms' | 'max_concurrency_per_client'>;
  /** Names this runner in its reports; `<host>:<pid>` by default. */
  runnerId?: string;
  /** How often reports are rewritten (they expire after three missed beats); 10 s by default. */
  heartbeatMs?: number;
  /** Where stdio clients' `envs` values come from: the process's environment, injected by main. */
  environment: NodeJS.ProcessEnv;
  /** Reconnect backoff of every connection. */
  backoff?: { initialMs: number; maxMs: number };
  /** Writes the config file's clients again (the store lost its data). */
  reseed?: () => Promise<void>;
  /** Where http and sse clients may connect (docs/network.md): the config file's policy. */
  outbound: OutboundPolicy;
}

/** Reports of runners that died are removed this long after they expired. */
const PRUNE_AFTER_MS = 10 * 60_000;

/**
 * The MCP runner core: holds a connection to every configured client, reports their states and tools into
 * the store, follows config changes published by admin, and runs tool jobs. The same code runs inside BullMQ
 * workers (cluster) and in the embedded process (through the in-process queue).
 */
export class McpRunnerCore {
  readonly runnerId: string;
  private readonly dependencies: McpRunnerCoreDependencies;
  private readonly connections = new Map<string, McpConnection>();
  private readonly heartbeatMs: number;
  private follower: ChangeFollower | undefined;
  private heartbeat: NodeJS.Timeout | undefined;
  private syncing: Promise<void> = Promise.resolve();
  private closed = false;
  /** Every http and sse connection of this runner opens through it (the outbound address policy). */
  private readonly agent: ReturnType<typeof outboundAgent>;
  private readonly outbound: OutboundPolicy;

  private constructor(dependencies: McpRunnerCoreDependencies) {
    this.dependencies = dependencies;
    this.outbound = dependencies.outbound;
    this.agent = outboundAgent(this.outbound);
    this.runnerId = dependencies.runnerId ?? `${hostname()}:${process.pid}`;
    this.heartbeatMs = dependencies.heartbeatMs ?? 10_000;
  }

  /** Subscribes to changes, then connects every stored client (in the background). */
  static async start(dependencies: McpRunnerCoreDependencies): Promise<McpRunnerCore> {
    const core = new McpRunnerCore(dependencies);
    core.follower = await dependencies.registry.follow({
      onChange: (change) => core.onChange(change),
      resync: () => core.sync(),
      ...(dependencies.reseed && { reseed: dependencies.reseed }),
    });
    await core.sync();
    core.heartbeat = setInterval(() => {
      core.beat().catch((error) => dependencies.logger.warn({ err: error }, 'MCP heartbeat failed'));
    }, core.heartbeatMs);
    core.heartbeat.unref();
    return core;
  }

  /** The connection states this runner holds (for tests and logs). */
  connection(name: string): McpConnection | undefined {
    return this.connections.get(name);
  }

  /**
   * Runs one tool job. A tool's own failure is a result. Throws a ToolJobFailure: retryable only for transport
   * failures; final for an expired job (504), a timeout (504), an unknown client or tool (400) and a tool the
   * client's config does not allow (403).
   */
  async execute(job: ToolJob): Promise<ToolResult> {
    if (Date.now() > job.notAfter) {
      throw final('upstream_timeout', 504, `the tool call waited too long for a runner; its caller gave up`);
    }
    let connection = this.connections.get(job.client);
    if (!connection) {
      // Admin may have added the client a moment ago and its notice not arrived yet.
      await this.sync();
      connection = this.connections.get(job.client);
    }
    if (!connection) throw final('mcp_tool_not_found', 400, `no MCP client named '${job.client}'`);
    if (!allowedByClientConfig(connection.config, job.tool)) {
      throw final(
        'mcp_tool_not_allowed',
        403,
        `tool '${job.tool}' is not allowed by the configuration of MCP client '${job.client}'`,
      );
    }
    if (connection.state === 'connected' && !connection.tools.some((tool) => tool.name === job.tool)) {
      throw final('mcp_tool_not_found', 400, `MCP client '${job.client}' has no tool named '${job.tool}'`);
    }
    try {
      return await connection.call(job.tool, job.arguments, this.dependencies.settings.tool_timeout_ms);
    } catch (error) {
      if (error instanceof ToolCallError) {
        if (error.kind === 'timeout') throw final('upstream_timeout', 504, error.message);
        throw new ToolJobFailure(
          new GatewayError({ type: 'upstream_unreachable', message: error.message }),
          true,
        );
      }
      throw error;
    }
  }

  /** Closes it as a resource of a composition root (its AsyncDisposableStack). */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  /** Disconnects every client and removes this runner's reports. */
  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.heartbeat);
    await this.follower?.close();
    await this.syncing.catch(() => {});
    const connections = [...this.connections.values()];
    this.connections.clear();
    await Promise.all(connections.map((connection) => connection.close()));
    await Promise.all(
      connections.map((connection) =>
        this.dependencies.registry.deleteStatus(connection.name, this.runnerId).catch(() => {}),
      ),
    );
    await this.agent.destroy().catch(() => {});
  }

  private onChange(change: McpChange): void {
    if (this.closed) return;
    if (change.kind === 'reconnect') {
      this.connections.get(change.name)?.reconnect();
      return;
    }
    if (change.kind === 'config') {
      this.sync().catch((error) => this.dependencies.logger.error({ err: error }, 'MCP config sync failed'));
    }
  }

  /** Brings the connections in line with the stored configs; serialized, so syncs never interleave. */
  private sync(): Promise<void> {
    const next = this.syncing.catch(() => {}).then(() => this.syncNow());
    this.syncing = next;
    return next;
  }

  private async syncNow(): Promise<void> {
    if (this.closed) return;
    const configs = await this.dependencies.registry.listConfigs();
    const names = new Set(configs.map((config) => config.name));
    for (const [name, connection] of this.connections) {
      if (names.has(name)) continue;
      this.connections.delete(name);
      await connection.close();
      await this.dependencies.registry.deleteStatus(name, this.runnerId);
    }
    for (const config of configs) {
      const existing = this.connections.get(config.name);
      if (!existing) this.open(config);
      else if (JSON.stringify(existing.config) !== JSON.stringify(config)) existing.update(config);
    }
  }

  private open(config: McpClientConfig): void {
    const { settings, logger } = this.dependencies;
    const connection = new McpConnection({
      config,
      connectTimeoutMs: settings.connect_timeout_ms,
      maxConcurrency: settings.max_concurrency_per_client,
      logger,
      environment: this.dependencies.environment,
      backoff: this.dependencies.backoff,
      fetch: fetchThrough(this.agent),
      outbound: this.outbound,
      onChange: (changed) => this.report(changed),
    });
    this.connections.set(config.name, connection);
    connection.start();
  }

  private report(connection: McpConnection): void {
    if (this.closed || this.connections.get(connection.name) !== connection) return;
    const now = Date.now();
    this.dependencies.registry
      .writeStatus({
        client: connection.name,
        runner: this.runnerId,
        pid: process.pid,
        state: connection.state,
        ...(connection.error ? { error: connection.error } : {}),
        tools: connection.tools,
        updated_at: now,
        expires_at: now + 3 * this.heartbeatMs,
      })
      .catch((error) => this.dependencies.logger.warn({ err: error }, 'writing an MCP client report failed'));
  }

  /** Rewrites every report (keeps them from expiring), prunes reports of dead runners, resyncs configs. */
  private async beat(): Promise<void> {
    for (const connection of this.connections.values()) this.report(connection);
    await this.dependencies.registry.listStatuses({ pruneAfterMs: PRUNE_AFTER_MS });
    await this.sync();
  }
}

function final(
  type: 'upstream_timeout' | 'mcp_tool_not_found' | 'mcp_tool_not_allowed',
  status: number,
  message: string,
) {
  return new ToolJobFailure(new GatewayError({ type, status, message }), false);
}
