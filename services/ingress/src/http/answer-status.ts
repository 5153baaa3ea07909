/**
 * The status of a served answer: 246 when a guardrail changed its content (docs/guardrails.md
 * "What the caller gets"), read from the `extra_fields.guardrails` the guardrail stage set;
 * 200 otherwise.
 */
export function answerStatus(extraFields: unknown): 200 | 246 {
  if (typeof extraFields !== 'object' || extraFields === null) return 200;
  const guardrails = (extraFields as { guardrails?: { outcome?: unknown } }).guardrails;
  return guardrails?.outcome === 'warning' ? 246 : 200;
}
