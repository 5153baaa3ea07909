import {
  type GatewayError,
  type Logger,
  type McpClientConfig,
  type McpClientState,
  mcpClientConfigSchema,
  notFound,
} from '@gw/shared';
import {
  type ChangeFollower,
  type Collection,
  defineCollection,
  followChanges,
  logInvalidDocuments,
  type Store,
} from '@gw/shared/store';
import {
  MCP_CHANNEL,
  MCP_CLIENTS_COLLECTION,
  MCP_STATUS_COLLECTION,
  type McpChange,
  type McpStatus,
  type McpToolDefinition,
  mcpChangeSchema,
  mcpStatusSchema,
  statusId,
} from './mcp-records.ts';

/** One runner's view of a client, as shown by the admin API. */
export interface McpRunnerReport {
  runner: string;
  pid?: number | undefined;
  state: McpClientState;
  error?: string | undefined;
}

/** A client as every runner reported it: the MCP client of the admin API plus the runners' detail. */
export interface McpClientView {
  name: string;
  config: McpClientConfig;
  /** Every tool the client offers (server names, before any filter). */
  tools: string[];
  state: McpClientState;
  error?: string;
  runners: McpRunnerReport[];
  /** The tools' definitions (for injection into chat requests); not part of the admin answer. */
  definitions: McpToolDefinition[];
}

/** When no runner reported on a client (none runs, or none has seen the client yet). */
export const NO_RUNNER_MESSAGE = 'no mcp-runner has reported on this client yet';

const STATE_RANK: Record<McpClientState, number> = { connected: 3, connecting: 2, error: 1, disconnected: 0 };

/**
 * The client's state over all runners: `connected` when any runner holds a connection (calls can be served),
 * else `connecting` when any is trying, else `error` (with the freshest message), else `disconnected`.
 */
export function aggregateView(config: McpClientConfig, reports: McpStatus[]): McpClientView {
  const sorted = [...reports].sort((left, right) => right.updated_at - left.updated_at);
  const best = sorted.reduce<McpStatus | undefined>(
    (chosen, report) => (!chosen || STATE_RANK[report.state] > STATE_RANK[chosen.state] ? report : chosen),
    undefined,
  );
  const withTools =
    sorted.find((report) => report.state === 'connected') ?? sorted.find((report) => report.tools.length > 0);
  const definitions = withTools?.tools ?? [];
  const view: McpClientView = {
    name: config.name,
    config,
    tools: definitions.map((tool) => tool.name),
    state: best?.state ?? 'disconnected',
    runners: sorted.map((report) => ({
      runner: report.runner,
      pid: report.pid,
      state: report.state,
      ...(report.error ? { error: report.error } : {}),
    })),
    definitions,
  };
  if (!best) view.error = NO_RUNNER_MESSAGE;
  else if (best.state === 'error' && best.error) view.error = best.error;
  return view;
}

/**
 * MCP client configs and runner reports in the store, and the change channel. Admin, ingress and runners all
 * use it; none of them needs to reach an MCP server to read it.
 */
export class McpRegistry {
  private readonly store: Store;
  private readonly logger: Logger;
  private readonly now: () => number;

  private readonly configs: Collection<McpClientConfig>;
  private readonly statuses: Collection<McpStatus>;

  constructor(options: { store: Store; logger: Logger; now?: () => number }) {
    this.store = options.store;
    this.logger = options.logger;
    this.now = options.now ?? Date.now;
    this.configs = defineCollection(options.store, MCP_CLIENTS_COLLECTION, mcpClientConfigSchema, {
      invalid: logInvalidDocuments(options.logger),
    });
    // A runner of another version keeps reporting in its own shape until it stops; its reports expire unread.
    this.statuses = defineCollection(options.store, MCP_STATUS_COLLECTION, mcpStatusSchema);
  }

  async listConfigs(): Promise<McpClientConfig[]> {
    return (await this.configs.values()).sort((left, right) => left.name.localeCompare(right.name));
  }

  async getConfig(name: string): Promise<McpClientConfig | undefined> {
    return this.configs.get(name);
  }

  /** Stores the config and tells every runner (which connect or reconnect) and every reader. */
  async putConfig(config: McpClientConfig): Promise<void> {
    await this.configs.put(config.name, config);
    await this.publish({ kind: 'config', name: config.name });
  }

  /** True when the client existed; runners disconnect it. */
  async deleteConfig(name: string): Promise<boolean> {
    const existed = await this.configs.delete(name);
    if (existed) await this.publish({ kind: 'config', name });
    return existed;
  }

  async requestReconnect(name: string): Promise<void> {
    await this.publish({ kind: 'reconnect', name });
  }

  async writeStatus(status: McpStatus): Promise<void> {
    await this.statuses.put(statusId(status.client, status.runner), status);
    await this.publish({ kind: 'status', name: status.client });
  }

  async deleteStatus(client: string, runner: string): Promise<void> {
    if (await this.statuses.delete(statusId(client, runner))) {
      await this.publish({ kind: 'status', name: client });
    }
  }

  /** Reports that are still alive (their runner heart-beats); expired ones older than `pruneAfterMs` are deleted. */
  async listStatuses(options: { pruneAfterMs?: number } = {}): Promise<McpStatus[]> {
    const now = this.now();
    const live: McpStatus[] = [];
    for (const { id, value: status } of await this.statuses.list()) {
      if (status.expires_at > now) live.push(status);
      else if (options.pruneAfterMs !== undefined && status.expires_at + options.pruneAfterMs < now) {
        await this.statuses.delete(id);
      }
    }
    return live;
  }

  /** Every client with its aggregated state and tools, by name. */
  async views(): Promise<McpClientView[]> {
    const [configs, statuses] = await Promise.all([this.listConfigs(), this.listStatuses()]);
    return configs.map((config) =>
      aggregateView(
        config,
        statuses.filter((status) => status.client === config.name),
      ),
    );
  }

  async view(name: string): Promise<McpClientView> {
    const config = await this.getConfig(name);
    if (!config) throw mcpClientNotFound(name);
    const statuses = (await this.listStatuses()).filter((status) => status.client === name);
    return aggregateView(config, statuses);
  }

  /** Writes the config file's clients (they win over stored ones of the same name, as for providers). */
  async seed(configs: McpClientConfig[]): Promise<void> {
    for (const config of configs) await this.putConfig(config);
  }

  /**
   * Follows changes: each notice goes to `onChange`; a notice lost on the way (or a store that lost its data,
   * after `reseed`) makes the follower call `resync`.
   */
  follow(options: {
    onChange: (change: McpChange) => void;
    resync: () => Promise<void>;
    reseed?: () => Promise<void>;
  }): Promise<ChangeFollower> {
    return followChanges({
      store: this.store,
      channel: MCP_CHANNEL,
      logger: this.logger,
      onMessage: (message) => {
        let value: unknown;
        try {
          value = JSON.parse(message);
        } catch {
          return;
        }
        const parsed = mcpChangeSchema.safeParse(value);
        if (parsed.success) options.onChange(parsed.data);
      },
      resync: options.resync,
      ...(options.reseed && { reseed: options.reseed }),
    });
  }

  private publish(change: McpChange): Promise<void> {
    return this.store.publish(MCP_CHANNEL, JSON.stringify(change));
  }
}

export function mcpClientNotFound(name: string): GatewayError {
  return notFound(`MCP client '${name}'`);
}
