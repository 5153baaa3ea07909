import { GatewayError, type GuardrailsConfig, guardrailsConfigSchema } from '@gw/shared';
import { describe, expect, it } from 'vitest';
import type { RequestMetadata } from './cel-condition.ts';
import { GuardrailSession } from './guardrail-session.ts';
import { compileGuardrails, GuardrailConfigError } from './guardrail-set.ts';

const metadata: RequestMetadata = {
  request_type: 'chat',
  model: 'gpt-4o',
  provider: 'openai',
  headers: {},
  virtual_key: 'vk',
  virtual_key_id: 'vk-1',
  team: '',
  customer: '',
  user: '',
  mcp_client: '',
  tool: '',
  arguments: {},
};

const PII = { id: 'pii', type: 'builtin', pii: ['email', 'card'] };
const WORDS = { id: 'words', type: 'builtin', keywords: ['forbidden'] };

async function session(
  config: Record<string, unknown>,
  options: { requested?: string[]; meta?: Partial<RequestMetadata> } = {},
) {
  const parsed: GuardrailsConfig = guardrailsConfigSchema.parse(config);
  const set = await compileGuardrails(parsed, { environment: {} });
  const reports: string[] = [];
  const rules = set.select(
    { ...metadata, ...options.meta },
    options.requested ? { requested: options.requested } : {},
  );
  return {
    rules: rules.map((rule) => rule.config.id),
    reports,
    session: new GuardrailSession(rules, {
      metadata,
      signal: new AbortController().signal,
      report: (report) => reports.push(`${report.rule}:${report.side}:${report.mode}:${report.outcome}`),
    }),
  };
}

const texts = (...values: string[]) => ({
  texts: values,
  locations: values.map((_, index) => `messages[${index}].content`),
});

describe('guardrail rules and sessions', () => {
  it('selects rules by condition, by x-gw-guardrail-id whatever their condition, and refuses an unknown id', async () => {
    const config = {
      profiles: [PII],
      rules: [
        { id: 'for-vk', condition: 'virtual_key == "vk"', input_profiles: ['pii'] },
        { id: 'for-other', condition: 'virtual_key == "other"', input_profiles: ['pii'] },
        { id: 'opt-in', condition: 'false', input_profiles: ['pii'] },
        { id: 'never-sampled', sampling_rate: 0, input_profiles: ['pii'] },
      ],
    };
    expect((await session(config)).rules).toEqual(['for-vk']);
    expect((await session(config, { requested: ['opt-in'] })).rules).toEqual(['for-vk', 'opt-in']);
    await expect(session(config, { requested: ['missing'] })).rejects.toThrow(
      /no enabled guardrail rule 'missing'/,
    );
  });

  it('names the field of a condition that does not compile', async () => {
    const config = guardrailsConfigSchema.parse({
      profiles: [PII],
      rules: [{ id: 'r', condition: 'team ==', input_profiles: ['pii'] }],
    });
    await expect(compileGuardrails(config, { environment: {} })).rejects.toThrow(GuardrailConfigError);
    await expect(compileGuardrails(config, { environment: {} })).rejects.toThrow(
      'guardrails.rules[0].condition',
    );
  });

  it('BLOCK: any violation throws guardrail_blocked with the violations, severity and masked excerpts', async () => {
    const { session: guard } = await session({
      profiles: [PII],
      rules: [{ id: 'r', input_profiles: ['pii'] }],
    });
    const error = await guard
      .input(texts('hi', 'card 4111 1111 1111 1111'))
      .catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(GatewayError);
    expect(error).toMatchObject({ type: 'guardrail_blocked', status: 446, code: 'r' });
    expect((error as GatewayError).extra).toMatchObject({
      guardrails: {
        outcome: 'blocked',
        side: 'input',
        severity: 'high',
        violations: [
          {
            rule: 'r',
            profile: 'pii',
            category: 'card',
            location: 'messages[1].content',
            excerpt: '41***11',
          },
        ],
      },
    });
  });

  it('REDACT: rewrites what can be rewritten and counts it; blocks what cannot', async () => {
    const config = {
      profiles: [PII, WORDS],
      rules: [{ id: 'r', action: 'REDACT', input_profiles: ['pii', 'words'] }],
    };
    const { session: guard, reports } = await session(config);
    expect(await guard.input(texts('mail a@example.com and b@example.org'))).toEqual([
      'mail [REDACTED_EMAIL] and [REDACTED_EMAIL]',
    ]);
    expect(guard.outcome()).toMatchObject({ outcome: 'warning', redactions: { email: 2 } });
    expect(reports).toEqual(['r:input:sync:warning']);
    const { session: other } = await session(config);
    await expect(other.input(texts('the forbidden word'))).rejects.toMatchObject({
      type: 'guardrail_blocked',
    });
  });

  it('reversible: placeholders go to the provider and the values come back in the answer', async () => {
    const config = {
      profiles: [PII],
      rules: [{ id: 'r', action: 'REDACT', reversible: true, input_profiles: ['pii'] }],
    };
    const { session: guard } = await session(config);
    const sent = await guard.input(texts('to a@example.com, cc b@example.com, again a@example.com'));
    expect(sent).toEqual(['to [EMAIL_1], cc [EMAIL_2], again [EMAIL_1]']);
    expect(guard.restore('Wrote to [EMAIL_1] and [EMAIL_2]; [EMAIL_9] unknown')).toBe(
      'Wrote to a@example.com and b@example.com; [EMAIL_9] unknown',
    );
    expect(guard.outcome()).toMatchObject({ outcome: 'warning', reversible: true });
  });

  it('async rules never block nor change, and report what they found', async () => {
    const { session: guard, reports } = await session({
      profiles: [WORDS],
      rules: [{ id: 'audit', mode: 'async', input_profiles: ['words'] }],
    });
    const input = texts('the forbidden word');
    expect(await guard.input(input)).toBe(input.texts);
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(reports).toEqual(['audit:input:async:flagged']);
    expect(guard.outcome().outcome).toBe('pass');
  });

  it('skips disabled profiles and rules', async () => {
    const config = {
      profiles: [{ ...WORDS, enabled: false }, PII],
      rules: [
        { id: 'off', enabled: false, input_profiles: ['pii'] },
        { id: 'on', input_profiles: ['words'] },
      ],
    };
    const { rules, session: guard } = await session(config);
    expect(rules).toEqual(['on']);
    expect(await guard.input(texts('forbidden'))).toEqual(['forbidden']);
  });
});
