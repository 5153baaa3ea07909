import type { BuiltinProfile, PiiEntity } from '@gw/shared';
import { Ajv, type ValidateFunction } from 'ajv';
import type { CheckRequest, Detection, GuardrailProvider, ProviderVerdict } from '../../guardrail-types.ts';
import { findPii } from './pii-detectors.ts';

const escapeRegex = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * Any run of whitespace between the words of a phrase: spaces, tabs, line breaks, no-break and other Unicode
 * spaces, and the zero-width characters that show as nothing (so `forbidden  plan`, `forbidden\nplan` and
 * `forbidden\u200Bplan` are the phrase `forbidden plan`).
 */
const GAP = '[\\s\\u200B-\\u200D\\u2060\\uFEFF]+';

/**
 * One keyword expression for the whole list: a text is scanned once, whatever the list's length. Matching is
 * on whitespace-normalised text: the words of a phrase match across any gap (GAP), in the text as it is, so
 * what is found keeps its place for excerpts and redaction.
 */
function keywordExpression(words: readonly string[], caseSensitive: boolean): RegExp | undefined {
  const phrases = [...new Set(words.map((word) => word.trim().split(/\s+/).join(' ')))].filter(Boolean);
  if (phrases.length === 0) return undefined;
  // Longest first, so a phrase wins over a word it starts with; boundaries only where the word has a word edge.
  const alternatives = phrases
    .sort((left, right) => right.length - left.length)
    .map((word) => {
      const body = word.split(' ').map(escapeRegex).join(GAP);
      return `${/^\w/.test(word) ? '\\b' : ''}${body}${/\w$/.test(word) ? '\\b' : ''}`;
    });
  return new RegExp(alternatives.join('|'), caseSensitive ? 'gu' : 'giu');
}

/**
 * The built-in provider: regular expressions, keyword lists, PII (e-mails, phones, cards with Luhn, IBANs with
 * mod-97, keys and tokens), a JSON schema for the output and a length limit. Everything is compiled once per
 * profile and runs synchronously, so a check costs no timer and no await.
 */
export function createBuiltinProvider(profile: BuiltinProfile): GuardrailProvider {
  const pii = new Set<PiiEntity>(profile.pii ?? []);
  const patterns = (profile.patterns ?? []).map((pattern) => ({
    ...pattern,
    expression: new RegExp(pattern.regex, pattern.ignore_case ? 'giu' : 'gu'),
    replacement: `[REDACTED_${pattern.name.toUpperCase()}]`,
  }));
  const keywords = keywordExpression(profile.keywords ?? [], profile.keywords_case_sensitive);
  let schema: ValidateFunction | undefined;
  if (profile.json_schema) {
    schema = new Ajv({ allErrors: false, strict: false }).compile(profile.json_schema);
  }

  function checkText(text: string, index: number, request: CheckRequest, detections: Detection[]): void {
    if (pii.size > 0) {
      for (const match of findPii(text, pii)) {
        detections.push({
          category: match.entity,
          severity: match.entity === 'secret' || match.entity === 'card' ? 'high' : 'medium',
          text: index,
          span: { start: match.start, end: match.end },
          replacement: `[REDACTED_${match.entity.toUpperCase()}]`,
          personal: true,
        });
      }
    }
    for (const pattern of patterns) {
      for (const match of text.matchAll(pattern.expression)) {
        if (match[0].length === 0) continue;
        detections.push({
          category: pattern.name,
          severity: pattern.severity,
          text: index,
          span: { start: match.index, end: match.index + match[0].length },
          ...(pattern.redact ? { replacement: pattern.replacement } : {}),
        });
      }
    }
    if (keywords) {
      for (const match of text.matchAll(keywords)) {
        detections.push({
          category: 'keyword',
          severity: 'high',
          text: index,
          span: { start: match.index, end: match.index + match[0].length },
        });
      }
    }
    if (schema && request.side === 'output') {
      let value: unknown;
      let problem: string | undefined;
      try {
        value = JSON.parse(text);
      } catch (error) {
        problem = `the output is not JSON: ${(error as Error).message}`;
      }
      if (problem === undefined && !schema(value)) {
        const [first] = schema.errors ?? [];
        problem = `the output does not match the schema: ${first?.instancePath || '(root)'} ${first?.message ?? ''}`;
      }
      if (problem !== undefined) {
        detections.push({
          category: 'json_schema',
          severity: 'medium',
          text: index,
          excerpt: problem.trim(),
        });
      }
    }
  }

  return {
    type: 'builtin',
    check(request): ProviderVerdict {
      const detections: Detection[] = [];
      let length = request.priorLength;
      request.texts.forEach((text, index) => {
        length += text.length;
        checkText(text, index, request, detections);
      });
      if (profile.max_length !== undefined && length > profile.max_length) {
        detections.push({
          category: 'length',
          severity: 'low',
          text: -1,
          excerpt: `${length} characters, more than the ${profile.max_length} allowed`,
        });
      }
      return { detections };
    },
  };
}
