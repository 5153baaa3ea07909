import type { GuardrailSeverity } from '@gw/shared';
import type { GuardrailSide } from './guardrail-types.ts';

/** What one rule's check of one side ended with. `flagged`: violations found by an async (log-only) rule. */
export type RuleOutcome = 'pass' | 'warning' | 'blocked' | 'flagged' | 'error';

/** A violation as answers and logs show it: where, what, how bad, and an excerpt (personal values masked). */
export interface Violation {
  rule: string;
  profile: string;
  side: GuardrailSide;
  category: string;
  severity: GuardrailSeverity;
  /** `messages[1].content`, `choices[0].message.content`, `arguments`, … (`*` for all of a side). */
  location: string;
  excerpt: string;
}

/** A change a rule made: the value itself is never repeated, only what replaced it and where. */
export interface Modification {
  rule: string;
  profile: string;
  side: GuardrailSide;
  category: string;
  location: string;
  replacement: string;
}

export interface RuleReport {
  rule: string;
  side: GuardrailSide;
  mode: 'sync' | 'async';
  outcome: RuleOutcome;
  processing_time_ms: number;
  /** Why a check failed (timeout, provider error), when it did. */
  error?: string;
}

/**
 * The guardrail outcome of one request (docs/guardrails.md "What the caller gets": Pass 200, Warning 246, Block 446): kept
 * on the pipeline exchange for request logs, shown in `extra_fields.guardrails` of the answer.
 */
export interface GuardrailOutcome {
  outcome: 'pass' | 'warning' | 'blocked';
  rules: RuleReport[];
  violations: Violation[];
  modifications: Modification[];
  /** Redacted values by kind (`email: 2`). */
  redactions: Record<string, number>;
  /** Time spent in synchronous checks (async ones never delay the request). */
  processing_time_ms: number;
  /** Redacted input values were placeholders, put back in the answer. */
  reversible?: boolean;
}

const SEVERITY_RANK: Record<GuardrailSeverity, number> = { low: 0, medium: 1, high: 2 };

/** The highest severity among violations (`low` when there are none). */
export function highestSeverity(violations: readonly Violation[]): GuardrailSeverity {
  let highest: GuardrailSeverity = 'low';
  for (const violation of violations)
    if (SEVERITY_RANK[violation.severity] > SEVERITY_RANK[highest]) highest = violation.severity;
  return highest;
}
