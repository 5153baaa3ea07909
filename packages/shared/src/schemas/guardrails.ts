import { z } from 'zod';

/** Guardrail provider profile, config-file form. */
export const guardrailProfileSchema = z.looseObject({
  id: z.string().min(1),
  type: z.string().min(1),
  region: z.string().optional(),
  guardrail_id: z.string().optional(),
  version: z.string().optional(),
});

/** Guardrail provider profile, API form (`POST /api/enterprise/guardrails/providers`). */
export const guardrailProviderSchema = z.strictObject({
  provider_name: z.string().min(1),
  policy_name: z.string().min(1),
  enabled: z.boolean().default(true),
  config: z.looseObject({
    guardrail_arn: z.string().optional(),
    guardrail_version: z.string().optional(),
    region: z.string().optional(),
  }),
});

export const guardrailRuleSchema = z.strictObject({
  id: z.string().min(1),
  /** CEL expression over request metadata. */
  condition: z.string().default('true'),
  input_profiles: z.array(z.string()).default([]),
  output_profiles: z.array(z.string()).default([]),
  action: z.enum(['BLOCK', 'WARN', 'REDACT']).default('BLOCK'),
});
