/**
 * Test helpers: fakes of the guardrail services gw calls, each speaking its real wire format and deciding by
 * content the same way, so one contract drives them all:
 * - a text containing `FORBIDDEN` is a violation the service blocks;
 * - an e-mail address is personal data the service masks (Bedrock, the webhook) or ignores (Azure classifies);
 * - a text containing `SLOW` is answered after `slowMs`.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { FakeBedrockAnswer, FakeBedrockRequest } from './fake-bedrock.ts';
import { type FakeUpstreamAnswer, type FakeUpstreamRequest, startFakeUpstream } from './fake-upstream.ts';

const EMAIL = /[\w.+-]+@[\w-]+(?:\.[\w-]+)+/g;
const SLOW_MS = 3_000;

interface ApplyGuardrailBody {
  source: 'INPUT' | 'OUTPUT';
  content: Array<{ text?: { text: string } }>;
}

/**
 * ApplyGuardrail (`POST /guardrail/{id}/version/{version}/apply`) as Bedrock answers it: `action`, `outputs`
 * (one per content block, masked `{EMAIL}`), `assessments` and `usage`. For `startFakeBedrock`'s `answer`.
 */
export function applyGuardrailAnswer(request: FakeBedrockRequest): FakeBedrockAnswer {
  if (!/^\/guardrail\/[^/]+\/version\/[^/]+\/apply$/.test(request.path)) {
    return { status: 404, json: { message: `no such operation ${request.path}` } };
  }
  const body = request.body as ApplyGuardrailBody;
  const texts = body.content.map((block) => block.text?.text ?? '');
  const joined = texts.join('\n');
  const emails = joined.match(EMAIL) ?? [];
  const forbidden = joined.includes('FORBIDDEN');
  const usage = {
    topicPolicyUnits: 1,
    contentPolicyUnits: 1,
    wordPolicyUnits: 1,
    sensitiveInformationPolicyUnits: 1,
    sensitiveInformationPolicyFreeUnits: 0,
    contextualGroundingPolicyUnits: 0,
  };
  const delayMs = joined.includes('SLOW') ? SLOW_MS : 0;
  if (!forbidden && emails.length === 0) {
    return { json: { usage, action: 'NONE', outputs: [], assessments: [{}] }, delayMs };
  }
  const assessment: Record<string, unknown> = {};
  if (forbidden) {
    assessment['contentPolicy'] = {
      filters: [
        { type: 'VIOLENCE', confidence: 'HIGH', filterStrength: 'HIGH', action: 'BLOCKED', detected: true },
      ],
    };
  }
  if (emails.length > 0) {
    assessment['sensitiveInformationPolicy'] = {
      piiEntities: emails.map((match) => ({ match, type: 'EMAIL', action: 'ANONYMIZED', detected: true })),
      regexes: [],
    };
  }
  const outputs = forbidden
    ? [{ text: 'Sorry, the model cannot answer this question.' }]
    : texts.map((text) => ({ text: text.replace(EMAIL, '{EMAIL}') }));
  return {
    json: {
      usage,
      action: 'GUARDRAIL_INTERVENED',
      actionReason: 'Guardrail blocked.',
      outputs,
      assessments: [assessment],
    },
    delayMs,
  };
}

/**
 * Azure AI Content Safety's `POST /contentsafety/text:analyze?api-version=…`: the key in
 * `Ocp-Apim-Subscription-Key` (401 with Azure's error body otherwise), `categoriesAnalysis` for the four
 * categories (Violence 6 for `FORBIDDEN`), `blocklistsMatch` for words of `blocklists`.
 */
export async function startFakeAzureContentSafety(options: {
  keys: string[];
  blocklists?: Record<string, string[]>;
}) {
  const answer = (request: FakeUpstreamRequest): FakeUpstreamAnswer => {
    const key = request.headers['ocp-apim-subscription-key'];
    if (typeof key !== 'string' || !options.keys.includes(key)) {
      return {
        status: 401,
        json: {
          error: {
            code: '401',
            message: 'Access denied due to invalid subscription key or wrong API endpoint.',
          },
        },
      };
    }
    if (!/[?&]api-version=[\w.-]+/.test(request.path)) {
      return { status: 404, json: { error: { code: 'NotFound', message: 'api-version is required' } } };
    }
    const body = request.body as { text?: unknown; categories?: string[]; blocklistNames?: string[] };
    if (typeof body?.text !== 'string' || body.text.length > 10_000) {
      return {
        status: 400,
        json: { error: { code: 'InvalidRequestBody', message: 'text must be 1-10000 characters' } },
      };
    }
    const text = body.text;
    const categories = body.categories ?? ['Hate', 'SelfHarm', 'Sexual', 'Violence'];
    const blocklistsMatch = (body.blocklistNames ?? []).flatMap((name) =>
      (options.blocklists?.[name] ?? [])
        .filter((word) => text.toLowerCase().includes(word.toLowerCase()))
        .map((word, index) => ({
          blocklistName: name,
          blocklistItemId: `item-${index}`,
          blocklistItemText: word,
        })),
    );
    return {
      json: {
        blocklistsMatch,
        categoriesAnalysis: categories.map((category) => ({
          category,
          severity: category === 'Violence' && text.includes('FORBIDDEN') ? 6 : 0,
        })),
      },
      delayMs: text.includes('SLOW') ? SLOW_MS : 0,
    };
  };
  return startFakeUpstream([{ method: 'POST', path: /^\/contentsafety\/text:analyze$/, answer }]);
}

/**
 * A guardrail webhook as docs/guardrails.md describes it: it checks `x-gw-signature` (HMAC-SHA256 of
 * `<x-gw-timestamp>.<body>` under `secret`; 401 otherwise), blocks `FORBIDDEN` (the violation's `text` an
 * index, as gw always read it) and `BANNED` (its `text` the offending text, as the docs show it), and masks
 * e-mail addresses (`modify`).
 */
export async function startFakeGuardrailWebhook(options: { secret: string }) {
  const answer = (request: FakeUpstreamRequest): FakeUpstreamAnswer => {
    const timestamp = String(request.headers['x-gw-timestamp'] ?? '');
    const signature = Buffer.from(String(request.headers['x-gw-signature'] ?? ''));
    const expected = Buffer.from(
      `sha256=${createHmac('sha256', options.secret)
        .update(`${timestamp}.${request.raw.toString('utf8')}`)
        .digest('hex')}`,
    );
    if (signature.length !== expected.length || !timingSafeEqual(signature, expected)) {
      return { status: 401, json: { error: 'bad signature' } };
    }
    const { texts } = request.body as { texts: string[] };
    const delayMs = texts.some((text) => text.includes('SLOW')) ? SLOW_MS : 0;
    const blocked = texts.findIndex((text) => text.includes('FORBIDDEN'));
    if (blocked !== -1) {
      return {
        json: {
          action: 'block',
          violations: [
            { category: 'forbidden_topic', severity: 'high', text: blocked, excerpt: 'FORBIDDEN' },
          ],
        },
        delayMs,
      };
    }
    if (texts.some((text) => text.includes('BANNED'))) {
      return {
        json: {
          action: 'block',
          violations: [{ category: 'banned_word', severity: 'high', text: 'BANNED' }],
        },
        delayMs,
      };
    }
    if (texts.some((text) => (text.match(EMAIL) ?? []).length > 0)) {
      return {
        json: { action: 'modify', texts: texts.map((text) => text.replace(EMAIL, '<email>')) },
        delayMs,
      };
    }
    return { json: { action: 'pass' }, delayMs };
  };
  return startFakeUpstream([{ method: 'POST', path: /.*/, answer }]);
}
