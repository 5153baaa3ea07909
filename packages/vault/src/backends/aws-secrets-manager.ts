import type { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import type { VaultConfig } from '@gw/shared';
import { type SecretBackend, SecretReadError } from '../secret-backend.ts';

type AwsConfig = VaultConfig['aws_secrets_manager'];

/** An ARN names its own region: `arn:<partition>:secretsmanager:<region>:<account>:secret:<name>`. */
const ARN_REGION = /^arn:[a-z-]+:secretsmanager:([a-z0-9-]+):/;

/**
 * AWS Secrets Manager through the official SDK (`GetSecretValue`, AWS JSON 1.1 signed with SigV4), credentials
 * from the standard chain as the Bedrock adapter: environment, web identity (EKS IRSA), ECS and EC2 metadata,
 * shared files. The SDK is loaded on first use, so a gateway without an `aws-sm.` reference never loads it.
 */
export class AwsSecretsManagerBackend implements SecretBackend {
  readonly name = 'aws-sm' as const;
  /** One client per region (an ARN's own, or the configured one): few, bounded by the regions referenced. */
  private readonly clients = new Map<string, Promise<SecretsManagerClient>>();
  private readonly options: {
    config: AwsConfig;
    environment: NodeJS.ProcessEnv;
    timeoutMs: number;
  };

  constructor(options: AwsSecretsManagerBackend['options']) {
    this.options = options;
  }

  async read(secret: string): Promise<string> {
    const { environment, config } = this.options;
    const region =
      ARN_REGION.exec(secret)?.[1] ??
      config.region ??
      environment['AWS_REGION'] ??
      environment['AWS_DEFAULT_REGION'];
    if (!region) {
      throw new SecretReadError(
        'no AWS region: set vault.aws_secrets_manager.region, AWS_REGION, or use an ARN',
      );
    }
    const { GetSecretValueCommand } = await import('@aws-sdk/client-secrets-manager');
    const client = await this.client(region);
    let answer: { SecretString?: string | undefined; SecretBinary?: Uint8Array | undefined };
    try {
      answer = await client.send(new GetSecretValueCommand({ SecretId: secret }));
    } catch (error) {
      const { name, message, $metadata } = error as Error & { $metadata?: { httpStatusCode?: number } };
      const status = $metadata?.httpStatusCode;
      throw new SecretReadError(
        `AWS Secrets Manager ${status ? `answered ${status}` : 'failed'}: ${name}${message ? ` (${message.slice(0, 200)})` : ''}`,
      );
    }
    if (answer.SecretString !== undefined) return answer.SecretString;
    if (answer.SecretBinary) return Buffer.from(answer.SecretBinary).toString('utf8');
    throw new SecretReadError('AWS Secrets Manager answered neither SecretString nor SecretBinary');
  }

  private client(region: string): Promise<SecretsManagerClient> {
    let client = this.clients.get(region);
    if (!client) {
      client = (async () => {
        const [{ SecretsManagerClient }, { NodeHttpHandler }] = await Promise.all([
          import('@aws-sdk/client-secrets-manager'),
          import('@smithy/node-http-handler'),
        ]);
        const { endpoint } = this.options.config;
        return new SecretsManagerClient({
          region,
          ...(endpoint && { endpoint }),
          maxAttempts: 2,
          requestHandler: new NodeHttpHandler({
            connectionTimeout: this.options.timeoutMs,
            requestTimeout: this.options.timeoutMs,
          }),
        });
      })();
      this.clients.set(region, client);
    }
    return client;
  }

  async close(): Promise<void> {
    for (const client of this.clients.values()) (await client).destroy();
    this.clients.clear();
  }
}
