import { z } from 'zod';

/**
 * The config file's `logs` section (docs/logs.md): one record per request, written off the request path.
 * Every field applies without a restart (`PUT /api/config`), but where records go (SQLite in the data directory,
 * or PostgreSQL at GW_LOGS_DATABASE_URL in a cluster) is decided at start.
 */
export const logsConfigSchema = z.strictObject({
  /** Write request logs. On by default (metadata only). */
  enabled: z.boolean().default(true),
  /** Keep request and response content in records (a key can still opt out: `log_content: false`). Off by default. */
  content: z.boolean().default(false),
  /** Most UTF-8 bytes kept of each of request and response content. */
  content_max_bytes: z.number().int().min(0).max(1_048_576).default(8_192),
  /** Records older than this many days are deleted (hourly, in batches); 0 keeps them forever. */
  retention_days: z.number().min(0).max(3_650).default(30),
});

export type LogsConfig = z.infer<typeof logsConfigSchema>;
