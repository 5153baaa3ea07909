import { z } from 'zod';

/**
 * Where secret-manager references of the config (docs/vault.md) are read from, and how often. A backend a
 * reference needs but this section does not set up fails start-up; AWS, Google and Azure also work from their
 * platform's usual environment (credential chain, application default credentials, workload identity).
 */
export const vaultConfigSchema = z.strictObject({
  /** Every reference is read again this often; a failed read keeps the last good value. */
  refresh_interval_seconds: z.number().int().min(5).max(86_400).default(300),
  /** Per backend call. */
  request_timeout_ms: z.number().int().positive().max(120_000).default(10_000),
  /** HashiCorp Vault, KV version 2 (`vault.<mount>/<path>#<field>`). */
  hashicorp: z
    .strictObject({
      address: z.url({ protocol: /^https?$/ }),
      /** Vault Enterprise namespace (`X-Vault-Namespace`). */
      namespace: z.string().min(1).optional(),
      auth: z.discriminatedUnion('method', [
        /** A token, usually `env.VAULT_TOKEN`. */
        z.strictObject({ method: z.literal('token'), token: z.string().min(1) }),
        /** The pod's service-account JWT exchanged at `auth/<mount>/login`; renewed, and logged in again when due. */
        z.strictObject({
          method: z.literal('kubernetes'),
          role: z.string().min(1),
          mount: z
            .string()
            .regex(/^[A-Za-z0-9_-]+$/)
            .default('kubernetes'),
          token_file: z.string().min(1).default('/var/run/secrets/kubernetes.io/serviceaccount/token'),
        }),
      ]),
    })
    .optional(),
  /** AWS Secrets Manager (`aws-sm.…`): the standard credential chain, as the Bedrock adapter. */
  aws_secrets_manager: z
    .strictObject({
      /** Falls back to AWS_REGION / AWS_DEFAULT_REGION; an ARN's own region wins. */
      region: z
        .string()
        .regex(/^[a-z0-9-]+$/)
        .optional(),
      /** A VPC endpoint, or a test server. */
      endpoint: z.url({ protocol: /^https?$/ }).optional(),
    })
    .default({}),
  /** Google Secret Manager (`gcp-sm.…`): application default credentials unless a key file is named. */
  gcp_secret_manager: z
    .strictObject({
      endpoint: z.url({ protocol: /^https?$/ }).default('https://secretmanager.googleapis.com'),
      /** A service-account key file; otherwise GOOGLE_APPLICATION_CREDENTIALS, workload identity, metadata. */
      credentials_file: z.string().min(1).optional(),
    })
    .default({ endpoint: 'https://secretmanager.googleapis.com' }),
  /** Azure Key Vault (`azure-kv.…`): a client secret, or workload identity (AZURE_* variables) when unset. */
  azure_key_vault: z
    .strictObject({
      tenant_id: z.string().min(1).optional(),
      client_id: z.string().min(1).optional(),
      client_secret: z.string().min(1).optional(),
      /** Workload identity's projected token (AZURE_FEDERATED_TOKEN_FILE when unset). */
      federated_token_file: z.string().min(1).optional(),
      authority_host: z.url({ protocol: /^https?$/ }).default('https://login.microsoftonline.com'),
      /** Every vault at this URL instead of `https://<vault-name>.vault.azure.net` (private endpoints, tests). */
      endpoint: z.url({ protocol: /^https?$/ }).optional(),
    })
    .default({ authority_host: 'https://login.microsoftonline.com' }),
});

export type VaultConfig = z.infer<typeof vaultConfigSchema>;
