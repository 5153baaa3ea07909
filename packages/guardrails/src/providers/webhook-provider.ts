import { createHmac } from 'node:crypto';
import { GUARDRAIL_SEVERITIES, resolveSecret, type WebhookProfile } from '@gw/shared';
import { request as send } from 'undici';
import { z } from 'zod';
import { type Detection, type GuardrailProvider, GuardrailProviderError } from '../guardrail-types.ts';
import type { ProviderOptions } from './provider-options.ts';

/** The webhook's answer (docs/guardrails.md "Webhook"). */
const webhookVerdictSchema = z.object({
  action: z.enum(['pass', 'block', 'modify']),
  violations: z
    .array(
      z.object({
        category: z.string().min(1).max(100),
        severity: z.enum(GUARDRAIL_SEVERITIES).default('medium'),
        /**
         * The text it concerns: the offending text itself (docs/guardrails.md), or its index in `texts`;
         * all of them when left out.
         */
        text: z.union([z.number().int().min(-1), z.string().max(1_000_000)]).default(-1),
        excerpt: z.string().max(1000).optional(),
      }),
    )
    .max(1000)
    .default([]),
  /** With `modify`: every text, as it must go on. */
  texts: z.array(z.string()).optional(),
});

/** Most characters of a violation's text kept as its excerpt when the webhook sends no excerpt. */
const EXCERPT_CHARS = 200;

function excerptOf(text: string): string | undefined {
  return text === '' ? undefined : text.slice(0, EXCERPT_CHARS);
}

/**
 * The index of the text a violation concerns: as given when a number; for the offending text itself, the
 * first text sent that is or contains it (-1, all of them, when none does).
 */
function textIndex(text: number | string, sent: readonly string[]): number {
  if (typeof text === 'number') return text < sent.length ? text : -1;
  if (text === '') return -1;
  const exact = sent.indexOf(text);
  return exact !== -1 ? exact : sent.findIndex((candidate) => candidate.includes(text));
}

/** `sha256=<hex>` of `<timestamp>.<body>` under the profile's secret: what the receiver recomputes. */
function webhookSignature(secret: string, timestamp: string, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex')}`;
}

/**
 * A generic HTTP webhook: gw POSTs the side's texts and the request's metadata as JSON, signed with
 * HMAC-SHA256 (`x-gw-signature`, over `x-gw-timestamp` and the body, so a replayed call is recognisable), and
 * reads `pass`, `block` with violations, or `modify` with the texts rewritten. The rule's timeout applies.
 */
export function createWebhookProvider(profile: WebhookProfile, options: ProviderOptions): GuardrailProvider {
  return {
    type: 'webhook',
    async check(request) {
      const { metadata } = request;
      const body = JSON.stringify({
        version: 1,
        rule: request.rule,
        profile: profile.id,
        side: request.side,
        texts: request.texts,
        // What the condition saw, less the headers (they may carry what the receiver has no need of).
        metadata: {
          request_type: metadata.request_type,
          model: metadata.model,
          provider: metadata.provider,
          virtual_key: metadata.virtual_key,
          team: metadata.team,
          customer: metadata.customer,
          user: metadata.user,
          mcp_client: metadata.mcp_client,
          tool: metadata.tool,
        },
      });
      // Header values may be references too (only Admin writes them through the API): read at each call.
      const headers: Record<string, string> = {};
      for (const [name, value] of Object.entries(profile.headers ?? {})) {
        const resolved = resolveSecret(value, options.environment, options.secrets);
        if (resolved === undefined)
          throw new GuardrailProviderError(`the header ${name} names ${value}, which has no value`);
        headers[name] = resolved;
      }
      headers['content-type'] = 'application/json';
      if (profile.secret) {
        const secret = resolveSecret(profile.secret, options.environment, options.secrets);
        if (!secret)
          throw new GuardrailProviderError(
            `the secret ${profile.secret} has no value (an unset variable, or an unread secret reference)`,
          );
        const timestamp = String(Math.floor(Date.now() / 1000));
        headers['x-gw-timestamp'] = timestamp;
        headers['x-gw-signature'] = webhookSignature(secret, timestamp, body);
      }
      const answer = await send(profile.url, {
        method: 'POST',
        headers,
        body,
        signal: request.signal,
        ...(options.outbound && { dispatcher: options.outbound.dispatcher }),
      });
      const payload: unknown = await answer.body.json().catch(() => undefined);
      if (answer.statusCode < 200 || answer.statusCode >= 300) {
        throw new GuardrailProviderError(`the webhook answered ${answer.statusCode}`);
      }
      const parsed = webhookVerdictSchema.safeParse(payload);
      if (!parsed.success)
        throw new GuardrailProviderError(
          `the webhook's answer is not a verdict: ${parsed.error.issues[0]?.message}`,
        );
      const verdict = parsed.data;
      if (verdict.action === 'pass') return { detections: [] };
      const detections: Detection[] = verdict.violations.map((violation) => {
        const excerpt =
          violation.excerpt ?? (typeof violation.text === 'string' ? excerptOf(violation.text) : undefined);
        return {
          category: violation.category,
          severity: violation.severity,
          text: textIndex(violation.text, request.texts),
          ...(excerpt !== undefined ? { excerpt } : {}),
        };
      });
      if (verdict.action === 'block') {
        if (detections.length === 0) detections.push({ category: 'webhook', severity: 'high', text: -1 });
        return { detections };
      }
      const texts = verdict.texts;
      if (!texts || texts.length !== request.texts.length) {
        throw new GuardrailProviderError('the webhook answered modify without one text for each text sent');
      }
      const changed = texts.flatMap((text, index) => (text === request.texts[index] ? [] : [index]));
      if (detections.length === 0) {
        for (const index of changed) detections.push({ category: 'modified', severity: 'low', text: index });
      }
      return {
        detections: detections.map((detection) => ({
          ...detection,
          replacement: '(rewritten by the webhook)',
        })),
        rewritten: texts,
      };
    },
  };
}
