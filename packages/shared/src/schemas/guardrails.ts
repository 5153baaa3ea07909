import { z } from 'zod';
import { destination, secret } from '../config/declared-fields.ts';

/**
 * Guardrails (docs/guardrails.md): profiles say which checker
 * runs with which settings; rules say when (a CEL condition over request metadata), on what (input, output)
 * and what a violation does. These are the shapes of the config file and of the admin API; the CEL and the
 * providers are compiled by `@gw/guardrails`, which also refuses a condition that does not compile.
 */

export const GUARDRAIL_PROVIDER_TYPES = ['builtin', 'bedrock', 'azure_content_safety', 'webhook'] as const;
export type GuardrailProviderType = (typeof GUARDRAIL_PROVIDER_TYPES)[number];

/** What the built-in PII detector knows: `secret` is API keys and tokens (the shapes gw itself redacts). */
export const PII_ENTITIES = ['email', 'phone', 'card', 'iban', 'secret'] as const;
export type PiiEntity = (typeof PII_ENTITIES)[number];

export const GUARDRAIL_SEVERITIES = ['low', 'medium', 'high'] as const;
export type GuardrailSeverity = (typeof GUARDRAIL_SEVERITIES)[number];

/**
 * What a violation does: `BLOCK` answers 446 for any violation; `REDACT` rewrites what can be rewritten (PII,
 * patterns marked `redact`, a provider's masked text) and answers 246, and blocks what cannot.
 */
const GUARDRAIL_ACTIONS = ['BLOCK', 'REDACT'] as const;

const guardrailId = z
  .string()
  .regex(/^[A-Za-z0-9_.-]{1,64}$/, 'must be 1-64 letters, digits, ".", "-" or "_"');

const profileBase = {
  id: guardrailId,
  /** A disabled profile is skipped by every rule that links it. */
  enabled: z.boolean().default(true),
  description: z.string().max(500).optional(),
};

const regexSource = z
  .string()
  .min(1)
  .max(1000)
  .superRefine((source, context) => {
    try {
      new RegExp(source, 'u');
    } catch (error) {
      context.addIssue({
        code: 'custom',
        message: `is not a valid regular expression: ${(error as Error).message}`,
      });
    }
  });

/** Checks that need no service: patterns, keyword lists, PII, a JSON schema of the output, a length limit. */
export const builtinProfileSchema = z.strictObject({
  ...profileBase,
  type: z.literal('builtin'),
  pii: z.array(z.enum(PII_ENTITIES)).optional(),
  patterns: z
    .array(
      z.strictObject({
        name: z.string().regex(/^[A-Za-z0-9_.-]{1,64}$/),
        regex: regexSource,
        /** Case-insensitive matching. */
        ignore_case: z.boolean().default(false),
        /** Under a REDACT rule a match is replaced by `[REDACTED_<NAME>]`; otherwise it blocks. */
        redact: z.boolean().default(false),
        severity: z.enum(GUARDRAIL_SEVERITIES).default('high'),
      }),
    )
    .max(100)
    .optional(),
  /** Words or phrases matched on word boundaries; a match always blocks. */
  keywords: z.array(z.string().min(1).max(200)).max(10_000).optional(),
  keywords_case_sensitive: z.boolean().default(false),
  /** Most characters the checked texts may hold together (a stream counts everything relayed so far). */
  max_length: z.number().int().positive().optional(),
  /** The output must be JSON valid against this schema (checked on output only). */
  json_schema: z.record(z.string(), z.unknown()).optional(),
});

/** AWS Bedrock Guardrails through ApplyGuardrail; credentials from the profile or the AWS chain. */
export const bedrockProfileSchema = z.strictObject({
  ...profileBase,
  type: z.literal('bedrock'),
  region: destination(z.string().regex(/^[a-z0-9-]{1,30}$/, 'must be an AWS region such as us-east-1')),
  /** The guardrail's id or ARN. */
  guardrail_id: z.string().min(1).max(2048),
  /** A version number or `DRAFT`. */
  version: z
    .string()
    .regex(/^([1-9][0-9]{0,7}|DRAFT)$/, 'must be a version number or DRAFT')
    .default('DRAFT'),
  /** Both empty: the AWS credential chain (environment, web identity, container or instance role). */
  access_key: secret(z.string()).optional(),
  secret_key: secret(z.string()).optional(),
  session_token: secret(z.string()).optional(),
  /** Another endpoint than `bedrock-runtime.<region>.amazonaws.com` (a VPC endpoint, a test fake). */
  endpoint: destination(z.url()).optional(),
});

const AZURE_CONTENT_CATEGORIES = ['Hate', 'SelfHarm', 'Sexual', 'Violence'] as const;

/** Azure AI Content Safety `text:analyze`: a category at or above `severity_threshold` blocks. */
export const azureContentSafetyProfileSchema = z.strictObject({
  ...profileBase,
  type: z.literal('azure_content_safety'),
  /** `https://<resource>.cognitiveservices.azure.com`. */
  endpoint: destination(z.url()),
  /** Sent as `Ocp-Apim-Subscription-Key`; `env.NAME` reads it from the environment at use. */
  api_key: secret(z.string().min(1)),
  api_version: z
    .string()
    .regex(/^[\w.-]{1,40}$/)
    .default('2024-09-01'),
  categories: z.array(z.enum(AZURE_CONTENT_CATEGORIES)).optional(),
  blocklist_names: z.array(z.string().min(1).max(64)).max(20).optional(),
  output_type: z.enum(['FourSeverityLevels', 'EightSeverityLevels']).default('FourSeverityLevels'),
  severity_threshold: z.number().int().min(0).max(7).default(4),
});

/** Any HTTP service: gw POSTs the texts as JSON, signed with HMAC-SHA256, and reads a verdict. */
export const webhookProfileSchema = z.strictObject({
  ...profileBase,
  type: z.literal('webhook'),
  url: destination(z.url()),
  /** The HMAC key of `x-gw-signature`; `env.NAME` reads it from the environment at use. */
  secret: secret(z.string().min(1)).optional(),
  /** Sent with every call: a receiver's own credentials, so every value is one. */
  headers: secret(z.record(z.string(), z.string())).optional(),
});

export const guardrailProfileSchema = z.discriminatedUnion('type', [
  builtinProfileSchema,
  bedrockProfileSchema,
  azureContentSafetyProfileSchema,
  webhookProfileSchema,
]);
export type GuardrailProfile = z.infer<typeof guardrailProfileSchema>;
export type BuiltinProfile = z.infer<typeof builtinProfileSchema>;
export type BedrockProfile = z.infer<typeof bedrockProfileSchema>;
export type AzureContentSafetyProfile = z.infer<typeof azureContentSafetyProfileSchema>;
export type WebhookProfile = z.infer<typeof webhookProfileSchema>;

export const guardrailRuleSchema = z
  .strictObject({
    id: guardrailId,
    description: z.string().max(500).optional(),
    enabled: z.boolean().default(true),
    /**
     * CEL over the request's metadata (docs/guardrails.md lists the variables); the rule applies where it is
     * true. `x-gw-guardrail-id` applies a rule whatever its condition.
     */
    condition: z.string().min(1).max(2000).default('true'),
    input_profiles: z.array(guardrailId).max(10).default([]),
    output_profiles: z.array(guardrailId).max(10).default([]),
    action: z.enum(GUARDRAIL_ACTIONS).default('BLOCK'),
    /** Share of the matching requests checked (0 to 1). */
    sampling_rate: z.number().min(0).max(1).default(1),
    /** Most time the rule's checks of one side (input or output, or one stream window) may take. */
    timeout_ms: z.number().int().positive().max(60_000).default(2_000),
    /** `async`: checks run beside the request, which they never delay, change or block (log only). */
    mode: z.enum(['sync', 'async']).default('sync'),
    /** What a failed or timed-out check does: block (446) or let the request go on (logged). */
    on_failure: z.enum(['block', 'allow']).default('block'),
    /** Streams: check the output per window of chunks as they go, or hold the whole answer and check it once. */
    stream_output: z.enum(['window', 'buffer']).default('window'),
    /** Characters of streamed text per window. */
    stream_window_chars: z.number().int().min(16).max(100_000).default(400),
    /** Redacted input values become placeholders that are put back in the answer (built-in detections). */
    reversible: z.boolean().default(false),
  })
  .refine((rule) => rule.input_profiles.length + rule.output_profiles.length > 0, {
    error: 'a rule needs input_profiles or output_profiles',
    path: ['input_profiles'],
  });
export type GuardrailRule = z.infer<typeof guardrailRuleSchema>;

/** The config file's `guardrails` section: ids are unique and every profile a rule names exists. */
export const guardrailsConfigSchema = z
  .strictObject({
    profiles: z.array(guardrailProfileSchema).default([]),
    rules: z.array(guardrailRuleSchema).default([]),
  })
  .superRefine((section, context) => {
    const profiles = new Set<string>();
    section.profiles.forEach((profile, index) => {
      if (profiles.has(profile.id))
        context.addIssue({ code: 'custom', path: ['profiles', index, 'id'], message: 'is used twice' });
      profiles.add(profile.id);
    });
    const rules = new Set<string>();
    section.rules.forEach((rule, index) => {
      if (rules.has(rule.id))
        context.addIssue({ code: 'custom', path: ['rules', index, 'id'], message: 'is used twice' });
      rules.add(rule.id);
      for (const side of ['input_profiles', 'output_profiles'] as const) {
        rule[side].forEach((profile, position) => {
          if (!profiles.has(profile)) {
            context.addIssue({
              code: 'custom',
              path: ['rules', index, side, position],
              message: `names no profile of guardrails.profiles ('${profile}')`,
            });
          }
        });
      }
    });
  });
export type GuardrailsConfig = z.infer<typeof guardrailsConfigSchema>;

/**
 * The enterprise API form of a profile (`POST /api/enterprise/guardrails/providers`): `provider_name` is the
 * profile type, `policy_name` its id, `config` its settings; Bedrock's `guardrail_arn` and
 * `guardrail_version` are its `guardrail_id` and `version`.
 */
export const guardrailProviderFormSchema = z.strictObject({
  provider_name: z.enum(GUARDRAIL_PROVIDER_TYPES),
  policy_name: guardrailId,
  enabled: z.boolean().default(true),
  config: z.record(z.string(), z.unknown()).default({}),
});
