import type { Logger } from '@gw/shared';
import type { ChangeFollower } from '@gw/shared/store';
import type { McpRegistry } from './mcp-registry.ts';
import { buildSnapshot, type McpCatalogSnapshot } from './tool-filter.ts';

/**
 * Ingress's in-memory copy of every client and tool, so that filtering costs no store round trip per
 * request. Reloaded whenever the change channel says something changed; `refresh()` reloads at once (a tool
 * that is not in the copy may have arrived a moment ago).
 */
export class McpCatalog {
  private current: McpCatalogSnapshot = buildSnapshot([]);
  private readonly registry: McpRegistry;
  private readonly logger: Logger;
  private loading: Promise<void> | undefined;
  private again = false;
  private follower: ChangeFollower | undefined;
  private timer: NodeJS.Timeout | undefined;

  private constructor(registry: McpRegistry, logger: Logger) {
    this.registry = registry;
    this.logger = logger;
  }

  /**
   * Follows the change channel (a lost notice makes it reload at once, see followChanges); `refreshIntervalMs`
   * (10 s by default) also reloads periodically, so reports of runners that died expire from the copy.
   */
  static async start(options: {
    registry: McpRegistry;
    logger: Logger;
    refreshIntervalMs?: number;
  }): Promise<McpCatalog> {
    const catalog = new McpCatalog(options.registry, options.logger);
    const reload = () =>
      catalog.refresh().catch((error) => options.logger.error({ err: error }, 'MCP catalog reload failed'));
    catalog.follower = await options.registry.follow({ onChange: reload, resync: () => catalog.refresh() });
    await catalog.refresh();
    catalog.timer = setInterval(reload, options.refreshIntervalMs ?? 10_000);
    catalog.timer.unref();
    return catalog;
  }

  snapshot(): McpCatalogSnapshot {
    return this.current;
  }

  /** Reloads from the store; concurrent calls share one load, and a change during a load triggers one more. */
  refresh(): Promise<void> {
    if (this.loading) {
      this.again = true;
      return this.loading;
    }
    this.loading = (async () => {
      try {
        do {
          this.again = false;
          this.current = buildSnapshot(await this.registry.views());
        } while (this.again);
      } finally {
        this.loading = undefined;
      }
    })();
    return this.loading;
  }

  /** Closes it as a resource of a composition root (its AsyncDisposableStack). */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.follower?.close();
    await this.loading?.catch((error) =>
      this.logger.debug({ err: error }, 'MCP catalog load failed at close'),
    );
  }
}
