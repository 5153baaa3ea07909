import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import {
  ApplyGuardrailCommand,
  type ApplyGuardrailCommandOutput,
  BedrockRuntimeClient,
  type GuardrailAssessment,
} from '@aws-sdk/client-bedrock-runtime';
import {
  type BedrockProfile,
  type GuardrailSeverity,
  guardedLookup,
  literalRefusal,
  OUTBOUND_REFUSED_CODE,
  resolveSecret,
} from '@gw/shared';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import { maskValue } from '../apply-detections.ts';
import { type Detection, type GuardrailProvider, GuardrailProviderError } from '../guardrail-types.ts';
import type { ProviderOptions } from './provider-options.ts';

const CONFIDENCE: Record<string, GuardrailSeverity> = {
  HIGH: 'high',
  MEDIUM: 'medium',
  LOW: 'low',
  NONE: 'low',
};

/**
 * Bedrock's assessments as detections. Only entries Bedrock acted on count (`action` other than NONE). A PII
 * entity or regex it ANONYMIZED may be rewritten (with Bedrock's own masked text); everything it BLOCKED
 * blocks. Assessments do not say which content block they concern, hence `text: -1`.
 */
function bedrockDetections(assessments: readonly GuardrailAssessment[]): Detection[] {
  const detections: Detection[] = [];
  const add = (detection: Omit<Detection, 'text'>) => detections.push({ ...detection, text: -1 });
  for (const assessment of assessments) {
    for (const topic of assessment.topicPolicy?.topics ?? []) {
      if (topic.action !== 'NONE')
        add({ category: `topic:${topic.name}`, severity: 'high', excerpt: topic.name ?? '' });
    }
    for (const filter of assessment.contentPolicy?.filters ?? []) {
      if (filter.action === 'NONE') continue;
      add({
        category: String(filter.type),
        severity: CONFIDENCE[String(filter.confidence)] ?? 'medium',
        excerpt: `${filter.type} (confidence ${filter.confidence})`,
      });
    }
    const words = [
      ...(assessment.wordPolicy?.customWords ?? []),
      ...(assessment.wordPolicy?.managedWordLists ?? []),
    ];
    for (const word of words) {
      if (word.action !== 'NONE') add({ category: 'word', severity: 'high', excerpt: word.match ?? '' });
    }
    const sensitive = assessment.sensitiveInformationPolicy;
    for (const entity of sensitive?.piiEntities ?? []) {
      if (entity.action === 'NONE') continue;
      add({
        category: String(entity.type).toLowerCase(),
        severity: 'medium',
        excerpt: maskValue(entity.match ?? ''),
        personal: true,
        ...(entity.action === 'ANONYMIZED' ? { replacement: `{${entity.type}}` } : {}),
      });
    }
    for (const regex of sensitive?.regexes ?? []) {
      if (regex.action === 'NONE') continue;
      add({
        category: regex.name ?? 'regex',
        severity: 'medium',
        excerpt: maskValue(regex.match ?? ''),
        ...(regex.action === 'ANONYMIZED' ? { replacement: `{${regex.name}}` } : {}),
      });
    }
    for (const filter of assessment.contextualGroundingPolicy?.filters ?? []) {
      if (filter.action === 'NONE') continue;
      add({
        category: `grounding:${filter.type}`,
        severity: 'medium',
        excerpt: `score ${filter.score} < ${filter.threshold}`,
      });
    }
  }
  return detections;
}

/**
 * A failed call in gw's words: the error's name (when it is an identifier) and the HTTP status, never the
 * endpoint's message (an operator-chosen endpoint's answer must not be read back through gw).
 */
function failureOf(error: unknown): string {
  const { name, code, $metadata } = error as {
    name?: unknown;
    code?: unknown;
    $metadata?: { httpStatusCode?: unknown };
  };
  if (code === OUTBOUND_REFUSED_CODE) return (error as Error).message;
  const kind = typeof name === 'string' && /^[A-Za-z][A-Za-z0-9_.]{0,63}$/.test(name) ? name : 'Error';
  const status = $metadata?.httpStatusCode;
  const systemCode = typeof code === 'string' && /^[A-Z0-9_]{2,40}$/.test(code) ? ` ${code}` : '';
  return `${kind}${typeof status === 'number' ? ` (HTTP ${status})` : systemCode}`;
}

/**
 * Node agents whose connections resolve names through the outbound address policy (the endpoint's literal
 * address was checked when the profile was written).
 */
function guardedAgents(options: ProviderOptions) {
  if (!options.outbound) return {};
  const lookup = guardedLookup(options.outbound.policy);
  return {
    httpAgent: new HttpAgent({ keepAlive: true, lookup }),
    httpsAgent: new HttpsAgent({ keepAlive: true, lookup }),
  };
}

/**
 * AWS Bedrock Guardrails through ApplyGuardrail (`POST /guardrail/{id}/version/{version}/apply`), with the
 * SDK's SigV4 signing: the profile's keys, or the standard AWS credential chain when it has none (as the
 * Bedrock adapter does). HTTP/1.1 keep-alive (the SDK's default handler speaks h2c to an `http://` endpoint).
 */
export function createBedrockProvider(profile: BedrockProfile, options: ProviderOptions): GuardrailProvider {
  const secret = (value: string | undefined) =>
    value ? resolveSecret(value, options.environment, options.secrets) : undefined;
  const profileCredentials = () => {
    const accessKeyId = secret(profile.access_key);
    const secretAccessKey = secret(profile.secret_key);
    const sessionToken = secret(profile.session_token);
    return accessKeyId && secretAccessKey
      ? { accessKeyId, secretAccessKey, ...(sessionToken ? { sessionToken } : {}) }
      : undefined;
  };
  const initial = profileCredentials();
  const endpointHost = profile.endpoint ? new URL(profile.endpoint).hostname : undefined;
  const client = new BedrockRuntimeClient({
    region: profile.region,
    ...(profile.endpoint ? { endpoint: profile.endpoint } : {}),
    // Read again at every call (an identity already expired is not memoized), so credentials rotated in a
    // secret manager (docs/vault.md) sign the next check.
    ...(initial
      ? { credentials: async () => ({ ...(profileCredentials() ?? initial), expiration: new Date(0) }) }
      : {}),
    requestHandler: new NodeHttpHandler({ connectionTimeout: 5_000, ...guardedAgents(options) }),
    maxAttempts: 1,
  });

  return {
    type: 'bedrock',
    async check(request) {
      const nonEmpty = request.texts
        .map((text, index) => ({ text, index }))
        .filter(({ text }) => text.length > 0);
      if (nonEmpty.length === 0) return { detections: [] };
      // The agents' lookup checks names; a literal endpoint address is checked here, before every call.
      const refused =
        endpointHost && options.outbound && literalRefusal(endpointHost, options.outbound.policy);
      if (refused) throw new GuardrailProviderError(`ApplyGuardrail failed: ${refused.message}`);
      let answer: ApplyGuardrailCommandOutput;
      try {
        answer = await client.send(
          new ApplyGuardrailCommand({
            guardrailIdentifier: profile.guardrail_id,
            guardrailVersion: profile.version,
            source: request.side === 'input' ? 'INPUT' : 'OUTPUT',
            content: nonEmpty.map(({ text }) => ({ text: { text } })),
          }),
          { abortSignal: request.signal },
        );
      } catch (error) {
        if (request.signal.aborted) throw error;
        throw new GuardrailProviderError(`ApplyGuardrail failed: ${failureOf(error)}`);
      }
      if (answer.action !== 'GUARDRAIL_INTERVENED') return { detections: [] };
      const detections = bedrockDetections(answer.assessments ?? []);
      if (detections.length === 0) {
        detections.push({
          category: 'intervened',
          severity: 'high',
          text: -1,
          excerpt: answer.actionReason ?? '',
        });
      }
      // Bedrock's masked text replaces each block only when it answered one output per block sent.
      const outputs = answer.outputs ?? [];
      if (outputs.length !== nonEmpty.length) return { detections };
      const rewritten: Array<string | undefined> = request.texts.map((text) => text);
      nonEmpty.forEach(({ index }, position) => {
        rewritten[index] = outputs[position]?.text;
      });
      return { detections, rewritten };
    },
    close() {
      client.destroy();
    },
  };
}
