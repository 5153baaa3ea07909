import { randomUUID } from 'node:crypto';
import { startFakeUpstream } from '../fake-upstream.ts';
import type { FakeSecretManager } from './fake-secret-manager.ts';

const SIGV4 =
  /^AWS4-HMAC-SHA256 Credential=([^/]+)\/\d{8}\/([a-z0-9-]+)\/secretsmanager\/aws4_request, SignedHeaders=[^,]+, Signature=[0-9a-f]{64}$/;

/**
 * AWS Secrets Manager on loopback: AWS JSON 1.1 (`POST /`, `x-amz-target: secretsmanager.GetSecretValue`),
 * refusing requests without a SigV4 authorization for the service, as the real endpoint does.
 */
export async function startFakeAwsSecretsManager(options: { region?: string } = {}) {
  const region = options.region ?? 'us-east-1';
  const secrets = new Map<string, Array<{ text: string; versionId: string }>>();
  const signatures: Array<{ accessKeyId: string; region: string }> = [];
  let broken: number | undefined;
  let readCount = 0;
  const awsError = (status: number, type: string, message: string) => ({
    status,
    headers: { 'x-amzn-errortype': type, 'x-amzn-requestid': randomUUID() },
    json: { __type: type, message },
  });

  const fake = await startFakeUpstream([
    {
      method: 'POST',
      path: /^\/$/,
      answer: (request) => {
        if (request.headers['x-amz-target'] !== 'secretsmanager.GetSecretValue') {
          return awsError(400, 'UnknownOperationException', 'only GetSecretValue is faked');
        }
        if (request.headers['content-type'] !== 'application/x-amz-json-1.1') {
          return awsError(400, 'SerializationException', 'expected application/x-amz-json-1.1');
        }
        readCount++;
        const signature = SIGV4.exec(String(request.headers.authorization ?? ''));
        if (!signature || !request.headers['x-amz-date']) {
          return awsError(400, 'IncompleteSignatureException', 'Authorization header requires SigV4');
        }
        signatures.push({ accessKeyId: signature[1] ?? '', region: signature[2] ?? '' });
        if (broken !== undefined) return awsError(broken, 'InternalServiceError', 'service unavailable');
        const { SecretId } = request.body as { SecretId?: string };
        const name = SecretId?.replace(/^arn:aws:secretsmanager:[^:]+:\d+:secret:/, '') ?? '';
        const versions = secrets.get(name);
        const current = versions?.at(-1);
        if (!current) {
          return awsError(
            400,
            'ResourceNotFoundException',
            "Secrets Manager can't find the specified secret.",
          );
        }
        return {
          headers: { 'x-amzn-requestid': randomUUID() },
          json: {
            ARN: `arn:aws:secretsmanager:${region}:123456789012:secret:${name}-AbCdEf`,
            Name: name,
            VersionId: current.versionId,
            SecretString: current.text,
            VersionStages: ['AWSCURRENT'],
            CreatedDate: Math.floor(Date.now() / 1000),
          },
        };
      },
    },
  ]);

  return {
    url: fake.url,
    signatures,
    reference: (name: string, field?: string) => `aws-sm.${name}${field ? `#${field}` : ''}`,
    put(name: string, fields: Record<string, string>) {
      secrets.set(name, [
        ...(secrets.get(name) ?? []),
        { text: JSON.stringify(fields), versionId: randomUUID() },
      ]);
    },
    /** A secret whose text is not JSON (a bare API key). */
    putText(name: string, text: string) {
      secrets.set(name, [...(secrets.get(name) ?? []), { text, versionId: randomUUID() }]);
    },
    breakReads(status: number) {
      broken = status;
    },
    heal() {
      broken = undefined;
    },
    reads: () => readCount,
    vaultConfig: { aws_secrets_manager: { region, endpoint: fake.url } },
    close: fake.close,
  } satisfies FakeSecretManager & Record<string, unknown>;
}
