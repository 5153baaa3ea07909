import { builtinProfileSchema } from '@gw/shared';
import { runGuardrailProviderContract } from '@gw/testkit/guardrail-contract';
import { describe, expect, it } from 'vitest';
import type { RequestMetadata } from '../../cel-condition.ts';
import type { CheckRequest } from '../../guardrail-types.ts';
import { createBuiltinProvider } from './builtin-provider.ts';

const profile = (fields: Record<string, unknown>) =>
  builtinProfileSchema.parse({ id: 'p', type: 'builtin', ...fields });

function check(
  fields: Record<string, unknown>,
  texts: string[],
  side: 'input' | 'output' = 'input',
  priorLength = 0,
) {
  const request: CheckRequest = {
    side,
    texts,
    priorLength,
    rule: 'r',
    metadata: {} as RequestMetadata,
    signal: new AbortController().signal,
  };
  return createBuiltinProvider(profile(fields)).check(request) as {
    detections: CheckRequest['texts'] & never[];
  };
}

describe('built-in provider', () => {
  runGuardrailProviderContract({
    create: () => ({ provider: createBuiltinProvider(profile({ keywords: ['forbidden'], pii: ['email'] })) }),
    emails: 'rewrites',
    remote: false,
  });

  it('matches keywords on word boundaries, case-insensitively unless told otherwise, phrases first', () => {
    const found = check({ keywords: ['bomb', 'how to'] }, [
      'How to build a BOMB',
      'a bombastic answer',
    ]).detections;
    expect(
      found.map((detection: { text: number; span: { start: number } }) => [
        detection.text,
        detection.span.start,
      ]),
    ).toEqual([
      [0, 0],
      [0, 15],
    ]);
    expect(check({ keywords: ['bomb'], keywords_case_sensitive: true }, ['BOMB']).detections).toEqual([]);
  });

  it('matches a phrase across any whitespace: two spaces, a line break, a tab, no-break or zero-width spaces', () => {
    const variants = [
      'the forbidden  plan',
      'the forbidden\nplan',
      'the Forbidden\t \r\nPlan',
      'the forbidden\u00A0plan',
      'the forbidden\u200Bplan',
      'the forbidden\u2003\u2060plan',
    ];
    const found = check({ keywords: ['forbidden   plan'] }, variants).detections as Array<{
      text: number;
      span: { start: number; end: number };
    }>;
    expect(found.map((detection) => detection.text)).toEqual([0, 1, 2, 3, 4, 5]);
    // The span is where the phrase is in the text as sent, gap included.
    expect(found.map(({ text, span }) => variants[text]!.slice(span.start, span.end))).toEqual(
      variants.map((variant) => variant.slice(4)),
    );
    expect(check({ keywords: ['forbidden plan'] }, ['forbiddenplan', 'forbidden-plan']).detections).toEqual(
      [],
    );
  });

  it('runs patterns, redactable or not, with their severity', () => {
    const [ticket] = check(
      { patterns: [{ name: 'ticket', regex: 'TKT-\\d+', redact: true, severity: 'low' }] },
      ['see TKT-1234'],
    ).detections;
    expect(ticket).toMatchObject({
      category: 'ticket',
      severity: 'low',
      span: { start: 4, end: 12 },
      replacement: '[REDACTED_TICKET]',
    });
    const [secret] = check({ patterns: [{ name: 'codename', regex: 'project x', ignore_case: true }] }, [
      'PROJECT X',
    ]).detections;
    expect(secret).toMatchObject({ category: 'codename', severity: 'high' });
    expect(secret).not.toHaveProperty('replacement');
  });

  it('checks the output against a JSON schema, and only the output', () => {
    const json_schema = { type: 'object', required: ['answer'], properties: { answer: { type: 'string' } } };
    expect(check({ json_schema }, ['{"answer":"yes"}'], 'output').detections).toEqual([]);
    expect(check({ json_schema }, ['not json'], 'input').detections).toEqual([]);
    const [notJson] = check({ json_schema }, ['not json'], 'output').detections;
    expect(notJson).toMatchObject({ category: 'json_schema', text: 0 });
    const [wrong] = check({ json_schema }, ['{"answer":1}'], 'output').detections;
    expect(wrong).toMatchObject({ category: 'json_schema', excerpt: expect.stringContaining('/answer') });
  });

  it('limits the length of all texts together, earlier stream windows included', () => {
    expect(check({ max_length: 10 }, ['12345', '12345']).detections).toEqual([]);
    expect(check({ max_length: 10 }, ['12345', '123456']).detections).toMatchObject([
      { category: 'length', text: -1 },
    ]);
    expect(check({ max_length: 10 }, ['123'], 'output', 8).detections).toMatchObject([
      { category: 'length' },
    ]);
  });
});
