import { z } from 'zod';

/**
 * The config file's `logs` section (docs/logs.md): one record per request, written off the request path.
 * Every field applies without a restart (`PUT /api/config`), but where records go (SQLite in the data directory,
 * or PostgreSQL at GW_LOGS_DATABASE_URL in a cluster) is decided at start.
 */
export const logsConfigSchema = z.strictObject({
  enabled: z
    .boolean()
    .meta({ description: 'Write request logs (metadata only unless content is on).' })
    .default(true),
  content: z
    .boolean()
    .meta({
      description:
        'Keep request and response content in records (a key can still opt out: log_content: false).',
    })
    .default(false),
  content_max_bytes: z
    .number()
    .int()
    .min(0)
    .max(1_048_576)
    .meta({ description: 'Most UTF-8 bytes kept of each of request and response content.', unit: 'bytes' })
    .default(8_192),
  retention_days: z
    .number()
    .min(0)
    .max(3_650)
    .meta({
      description: 'Records older than this are deleted (hourly, in batches); 0 keeps them forever.',
      unit: 'days',
    })
    .default(30),
});

export type LogsConfig = z.infer<typeof logsConfigSchema>;
