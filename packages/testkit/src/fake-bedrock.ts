/**
 * Test helper: a fake Bedrock Runtime on loopback that checks authentication the way AWS does. SigV4 is
 * verified with an implementation of its own (node:crypto, written from the SigV4 specification, not the
 * signer gw uses), so a wrongly encoded path, an unsigned header or a changed body fails as it would in
 * AWS: 403 InvalidSignatureException.
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { type FakeUpstreamAnswer, type FakeUpstreamRequest, startFakeUpstream } from './fake-upstream.ts';

export interface FakeBedrockRequest {
  method: string;
  /** The path exactly as received, percent-encoding included. */
  path: string;
  headers: IncomingHttpHeaders;
  body: unknown;
  rawBody: Buffer;
  /** How the request proved who it is. */
  auth: { kind: 'sigv4'; accessKeyId: string; region: string; signedHeaders: string[] } | { kind: 'bearer' };
}

export type FakeBedrockAnswer =
  | { status?: number; headers?: Record<string, string>; json: unknown; delayMs?: number }
  | { status?: number; headers?: Record<string, string>; frames: Buffer[] };

export interface FakeBedrockOptions {
  /** Access key id → secret access key (and the session token it must come with, if any). */
  credentials: Record<string, { secretAccessKey: string; sessionToken?: string }>;
  /** Bedrock API keys accepted as `Authorization: Bearer`. */
  apiKeys?: string[];
  answer: (request: FakeBedrockRequest) => FakeBedrockAnswer;
}

const sha256Hex = (data: string | Buffer) => createHash('sha256').update(data).digest('hex');
const hmac = (key: string | Buffer, data: string) => createHmac('sha256', key).update(data).digest();

/** RFC 3986 encoding, as SigV4 wants it (encodeURIComponent leaves !'()* alone). */
function encodeRfc3986(value: string): string {
  return encodeURIComponent(value).replace(
    /[!'()*]/g,
    (char) => `%${char.charCodeAt(0).toString(16).toUpperCase()}`,
  );
}

/**
 * The canonical URI of a non-S3 service: each segment of the path as received is encoded once more, so
 * `%3A` in a model id is signed as `%253A`.
 */
function canonicalUri(rawPath: string): string {
  return rawPath
    .split('/')
    .map((segment) => encodeRfc3986(segment))
    .join('/');
}

function canonicalQuery(search: URLSearchParams): string {
  return [...search.entries()]
    .map(([name, value]) => `${encodeRfc3986(name)}=${encodeRfc3986(value)}`)
    .sort()
    .join('&');
}

const AUTHORIZATION =
  /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, SignedHeaders=([^,]+), Signature=([0-9a-f]{64})$/;

class Rejection extends Error {}

function verifySigV4(
  request: { method: string; path: string; headers: IncomingHttpHeaders; rawBody: Buffer },
  credentials: FakeBedrockOptions['credentials'],
): FakeBedrockRequest['auth'] {
  const header = String(request.headers['authorization'] ?? '');
  const match = AUTHORIZATION.exec(header);
  if (!match) throw new Rejection('Authorization header requires a valid SigV4 signature');
  const [, accessKeyId, date, region, service, signedHeaderList, signature] = match;
  const known = credentials[accessKeyId!];
  if (!known) throw new Rejection('The security token included in the request is invalid.');
  if (service !== 'bedrock')
    throw new Rejection(`Credential should be scoped to correct service: 'bedrock'.`);
  const amzDate = String(request.headers['x-amz-date'] ?? '');
  if (!amzDate.startsWith(date!)) throw new Rejection('Date in Credential scope does not match x-amz-date.');
  const signedHeaders = signedHeaderList!.split(';');
  for (const required of ['host', 'x-amz-date']) {
    if (!signedHeaders.includes(required)) throw new Rejection(`'${required}' must be a signed header.`);
  }
  if (known.sessionToken !== undefined) {
    if (request.headers['x-amz-security-token'] !== known.sessionToken) {
      throw new Rejection('The security token included in the request is invalid.');
    }
    if (!signedHeaders.includes('x-amz-security-token')) {
      throw new Rejection("'x-amz-security-token' must be a signed header.");
    }
  }
  const payloadHash = sha256Hex(request.rawBody);
  const declaredHash = request.headers['x-amz-content-sha256'];
  if (declaredHash !== undefined && declaredHash !== payloadHash) {
    throw new Rejection('The provided x-amz-content-sha256 header does not match what was computed.');
  }
  const [rawPath = '/', rawQuery = ''] = request.path.split('?');
  const canonicalRequest = [
    request.method,
    canonicalUri(rawPath),
    canonicalQuery(new URLSearchParams(rawQuery)),
    ...signedHeaders.map(
      (name) =>
        `${name}:${String(request.headers[name] ?? '')
          .trim()
          .replace(/\s+/g, ' ')}`,
    ),
    '',
    signedHeaderList,
    payloadHash,
  ].join('\n');
  const scope = `${date}/${region}/${service}/aws4_request`;
  const stringToSign = ['AWS4-HMAC-SHA256', amzDate, scope, sha256Hex(canonicalRequest)].join('\n');
  const dateKey = hmac(`AWS4${known.secretAccessKey}`, date!);
  const signingKey = hmac(hmac(hmac(dateKey, region!), service!), 'aws4_request');
  const expected = hmac(signingKey, stringToSign);
  const received = Buffer.from(signature!, 'hex');
  if (received.length !== expected.length || !timingSafeEqual(received, expected)) {
    throw new Rejection(
      'The request signature we calculated does not match the signature you provided. Check your AWS ' +
        'Secret Access Key and signing method. Consult the service documentation for details.',
    );
  }
  return { kind: 'sigv4', accessKeyId: accessKeyId!, region: region!, signedHeaders };
}

function authenticate(
  request: { method: string; path: string; headers: IncomingHttpHeaders; rawBody: Buffer },
  options: FakeBedrockOptions,
): FakeBedrockRequest['auth'] {
  const header = String(request.headers['authorization'] ?? '');
  if (header.startsWith('Bearer ')) {
    if (!(options.apiKeys ?? []).includes(header.slice('Bearer '.length))) {
      throw new Rejection('Invalid API Key format: Must start with pre-defined prefix');
    }
    return { kind: 'bearer' };
  }
  return verifySigV4(request, options.credentials);
}

export async function startFakeBedrock(options: FakeBedrockOptions) {
  const requests: FakeBedrockRequest[] = [];
  const rejections: string[] = [];
  const answer = (received: FakeUpstreamRequest): FakeUpstreamAnswer => {
    let auth: FakeBedrockRequest['auth'];
    try {
      auth = authenticate({ ...received, rawBody: received.raw }, options);
    } catch (error) {
      if (!(error instanceof Rejection)) throw error;
      rejections.push(error.message);
      const type = error.message.startsWith('The request signature')
        ? 'InvalidSignatureException'
        : 'UnrecognizedClientException';
      return {
        status: 403,
        headers: { 'x-amzn-errortype': `${type}:http://internal.amazon.com/coral/com.amazon.coral.service/` },
        json: { message: error.message },
      };
    }
    const recorded: FakeBedrockRequest = {
      method: received.method,
      path: received.path,
      headers: received.headers,
      rawBody: received.raw,
      body: received.raw.length ? JSON.parse(received.raw.toString('utf8')) : undefined,
      auth,
    };
    requests.push(recorded);
    const scripted = options.answer(recorded);
    if ('json' in scripted) return scripted;
    return {
      status: scripted.status ?? 200,
      headers: { 'content-type': 'application/vnd.amazon.eventstream', ...scripted.headers },
      chunks: [Buffer.concat(scripted.frames)],
    };
  };
  // One route: every Bedrock Runtime operation (models, ApplyGuardrail) is authenticated the same way, and the
  // test answers it.
  const fake = await startFakeUpstream([{ method: 'POST', path: /^\/(?:model|guardrail)\//, answer }]);
  return {
    url: fake.url,
    requests,
    /** Why requests were refused, in order. */
    rejections,
    close: fake.close,
  };
}
