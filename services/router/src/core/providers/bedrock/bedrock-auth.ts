import { Sha256 } from '@aws-crypto/sha256-js';
import { GatewayError } from '@gw/shared';
import { SignatureV4 } from '@smithy/signature-v4';
import type { BedrockKeySettings } from './bedrock-config.ts';

export interface AwsCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
}

/** Where AWS credentials come from when a key has none of its own. */
export type CredentialSource = () => Promise<AwsCredentials>;

/** What gets signed: exactly the request that goes out. */
export interface BedrockRequestToSign {
  url: URL;
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  body: string;
}

/**
 * The standard AWS chain (environment, web identity for EKS IRSA, ECS container and EC2 instance metadata,
 * shared config files). Loaded on first use so gw starts without the SDK's credential modules, and kept:
 * the chain caches the credentials it found and refreshes them before they expire.
 */
export function standardCredentialChain(): CredentialSource {
  let chain: Promise<CredentialSource> | undefined;
  return async () => {
    chain ??= import('@aws-sdk/credential-providers').then(({ fromNodeProviderChain }) =>
      fromNodeProviderChain(),
    );
    return (await chain)();
  };
}

function credentialsUnavailable(provider: string, cause: unknown): GatewayError {
  return new GatewayError({
    type: 'provider_not_configured',
    message: `provider '${provider}': no AWS credentials in the key config nor from the AWS credential chain`,
    provider,
    cause,
  });
}

/**
 * The headers of one Bedrock request with its authentication: a Bedrock API key as a bearer token, or a
 * SigV4 signature (service `bedrock`) over the method, the host, the path as sent, every header returned
 * and the body.
 */
export async function authorizeBedrockRequest(
  request: BedrockRequestToSign,
  options: { provider: string; settings: BedrockKeySettings; credentialChain: CredentialSource },
): Promise<Record<string, string>> {
  const { settings } = options;
  if (settings.auth === 'api_key') return { ...request.headers, authorization: `Bearer ${settings.apiKey}` };

  let credentials: AwsCredentials;
  try {
    credentials = settings.credentials ?? (await options.credentialChain());
  } catch (error) {
    throw credentialsUnavailable(options.provider, error);
  }
  const signer = new SignatureV4({
    service: 'bedrock',
    region: settings.region,
    credentials,
    sha256: Sha256,
  });
  const signed = await signer.sign({
    method: request.method,
    protocol: request.url.protocol,
    hostname: request.url.hostname,
    port: request.url.port ? Number(request.url.port) : undefined,
    // The path exactly as it goes on the wire (already percent-encoded); the signer encodes it once more,
    // as SigV4 wants for every service but S3.
    path: request.url.pathname,
    query: Object.fromEntries(request.url.searchParams),
    headers: { ...request.headers, host: request.url.host },
    body: request.body,
  });
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(signed.headers)) headers[name.toLowerCase()] = String(value);
  return headers;
}
