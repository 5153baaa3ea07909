import { hostname } from 'node:os';
import { DroppedTally, startLogRetention } from '@gw/logs';
import { PostgresLogStore } from '@gw/logs/postgres';
import { RedisLogConsumer, RedisLogTail } from '@gw/logs/redis';
import { closeOnDispose, type LiveSettings, type Logger, type Metrics } from '@gw/shared';
import { connectRedis } from '@gw/shared/store';

/**
 * The cluster's request-log side of the admin process (docs/logs.md): the PostgreSQL store `/api/logs` reads,
 * the log worker that fills it from the ingress replicas' Redis stream (a consumer group, so any number of admin
 * replicas share the work), the hourly retention, and the live tail (plain XREAD of the same stream). Without
 * a Redis URL only the store is opened (reads).
 */
export async function startLogWorker(options: {
  databaseUrl: string;
  redisUrl: string | undefined;
  prefix: string;
  /** The live settings: how long records are kept (`logs.retention_days`). */
  settings: LiveSettings;
  logger: Logger;
  /** Where entries the worker finds lost are counted (`gw_dropped_log_records_total`). */
  metrics: Metrics;
}) {
  const { logger, redisUrl, prefix } = options;
  const store = await PostgresLogStore.open({ url: options.databaseUrl });
  const onError = (error: unknown) => logger.warn({ err: error }, 'request logs: the log worker failed');
  const retention = startLogRetention({
    store,
    retentionDays: () => options.settings.logs.current().retention_days,
    onError,
  });
  // Connections of their own without a command timeout: XREADGROUP and XREAD block while waiting.
  const consumerConnection = redisUrl ? connectRedis(redisUrl, { maxRetriesPerRequest: null }) : undefined;
  const tailConnection = redisUrl ? connectRedis(redisUrl, { maxRetriesPerRequest: null }) : undefined;
  // What the worker finds lost (entries trimmed or deleted before they were stored, undecodable records) is
  // counted where an operator looks: `/api/logs/dropped` (this process's own rows) and the metric.
  const tally = new DroppedTally(`${hostname()}:${process.pid}:${Date.now().toString(36)}`);
  const consumer =
    consumerConnection &&
    RedisLogConsumer.start({
      redis: consumerConnection,
      prefix,
      store,
      onError,
      tally,
      onDrop: (reason, count) => options.metrics.droppedLogRecords.inc({ reason }, count),
    });
  const tail = tailConnection && new RedisLogTail({ redis: tailConnection, prefix, onError });
  return closeOnDispose({
    store,
    tail,
    async close(): Promise<void> {
      await consumer?.close();
      await tail?.close();
      await retention.stop();
      consumerConnection?.disconnect();
      tailConnection?.disconnect();
      await store.close();
    },
  });
}
