import { z } from 'zod';
import { destination, secret, secretsByName } from '../config/declared-fields.ts';

/** The built-in providers, by the lowercase name used in `<provider>/<model>`. */
export const PROVIDER_NAMES = [
  'openai',
  'azure',
  'anthropic',
  'bedrock',
  'cohere',
  'vertex',
  'mistral',
  'ollama',
  'groq',
  'sgl',
  'gemini',
] as const;
export type BuiltInProvider = (typeof PROVIDER_NAMES)[number];

/** Wire formats a custom provider can be built over. */
export const BASE_FORMATS = ['openai', 'anthropic', 'bedrock', 'cohere', 'gemini'] as const;
export type BaseFormat = (typeof BASE_FORMATS)[number];

export const OPERATIONS = ['chat', 'chat_stream', 'text', 'text_stream', 'embeddings'] as const;
export type Operation = (typeof OPERATIONS)[number];

/** Provider names are lowercase identifiers; custom providers pick their own. */
export const providerNameSchema = z
  .string()
  .regex(/^[a-z][a-z0-9_-]{0,62}$/, 'must be lowercase letters, digits, "-" or "_", starting with a letter');

/**
 * A key's provider-specific settings, validated by its adapter (`*-config.ts` of the router's providers). What
 * they hold is declared here: the credentials and destinations any adapter reads, and every other member named
 * like a credential (a new adapter's `client_secret`) counts as one too.
 */
const keySettingsSchema = secretsByName(
  z.looseObject({
    /** Azure: the resource's URL. */
    endpoint: destination(z.unknown()).optional(),
    /** Bedrock, Vertex: the region, part of the host called. */
    region: destination(z.unknown()).optional(),
    /** Bedrock: static IAM credentials. */
    access_key: secret(z.unknown()).optional(),
    secret_key: secret(z.unknown()).optional(),
    session_token: secret(z.unknown()).optional(),
    /** Vertex: the service-account JSON. */
    auth_credentials: secret(z.unknown()).optional(),
  }),
);

const providerKeySchema = z.strictObject({
  /** Stable identifier, referenced by virtual keys' `key_ids`. Generated when omitted. */
  id: z.string().min(1).max(128).optional(),
  /** The secret, or `env.NAME` to read it from the environment at use. */
  value: secret(z.string()).default(''),
  weight: z.number().min(0).default(1),
  /**
   * Requests and tokens a minute the provider allows this key, for each model it serves (unset: unknown).
   * Routing leaves a key that reached one out while another has room, and reads the headroom they leave
   * (docs/routing-health.md "Signals"); gw does not refuse requests by them.
   */
  rpm_limit: z.number().int().positive().optional(),
  tpm_limit: z.number().int().positive().optional(),
  /** Models this key may serve; empty means every model. */
  models: z.array(z.string()).default([]),
  /** Provider-specific key settings (azure endpoint and deployments, bedrock credentials, vertex project…). */
  config: keySettingsSchema.optional(),
});

export const networkConfigSchema = z.strictObject({
  /** HTTP(S) only: another scheme (`file:`, `gopher:`…) is never an upstream. */
  base_url: destination(
    z.url({ protocol: /^https?$/, error: 'is not an http:// or https:// URL' }),
  ).optional(),
  /** Per-attempt timeout of one upstream call. */
  timeout_ms: z.number().int().positive().max(3_600_000).default(60_000),
  /** Per-model overrides of timeout_ms (reasoning models need long ones). */
  model_timeouts_ms: z.record(z.string(), z.number().int().positive().max(3_600_000)).default({}),
  max_retries: z.number().int().min(0).max(10).default(2),
  retry_backoff_initial_ms: z.number().int().min(0).max(60_000).default(100),
  retry_backoff_max_ms: z.number().int().min(0).max(300_000).default(5_000),
  /** Sent with every call; a header named like a credential (`authorization`, `x-api-key`) is one. */
  extra_headers: secretsByName(z.record(z.string(), z.string())).default({}),
  /**
   * Most requests this provider serves at once on one router replica (unset: no bound). Past it requests
   * wait in a queue of `buffer_size`.
   */
  concurrency: z.number().int().positive().max(100_000).optional(),
  /** Requests that may wait for a place when `concurrency` is reached. */
  buffer_size: z.number().int().min(0).max(1_000_000).default(1_000),
  /**
   * With the queue full: true drops a request at once (503 request_dropped); false (default) lets it wait for
   * a place in the queue, for at most `timeout_ms`, then drops it.
   */
  drop_excess_requests: z.boolean().default(false),
  /**
   * Not acted on yet: every upstream origin gets a pool of 256 connections. Refused unless it says just that
   * (configs stored by earlier builds carry the old default, 256).
   */
  max_connections: z
    .number()
    .refine((value) => value === 256, {
      error: 'is not supported yet (upstream pools keep 256 connections per origin); remove it',
    })
    .optional(),
});

const customProviderSchema = z.strictObject({
  base_provider: z.enum(BASE_FORMATS),
  allowed_operations: z.array(z.enum(OPERATIONS)).optional(),
});

export const providerConfigSchema = z.strictObject({
  keys: z.array(providerKeySchema).default([]),
  network_config: networkConfigSchema.default(networkConfigSchema.parse({})),
  custom_provider_config: customProviderSchema.optional(),
});

export type NetworkConfig = z.infer<typeof networkConfigSchema>;
export type ProviderConfig = z.infer<typeof providerConfigSchema>;
/** A provider as the admin API shows it: its name and config, key values and credential fields masked. */
export type ProviderView = ProviderConfig & { name: string };
