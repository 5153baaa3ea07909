// `@gw/guardrails`: guardrail rules (CEL conditions) and profiles (providers), compiled once, and the
// per-request session that checks input and output. The store-backed registry is `@gw/guardrails/registry`.

export { endsInPlaceholder } from './apply-detections.ts';
export type { RequestMetadata } from './cel-condition.ts';
export type { GuardrailOutcome, RuleReport, Violation } from './guardrail-outcome.ts';
export { GuardrailSession } from './guardrail-session.ts';
export {
  checkProfile,
  compileRuleCondition,
  GuardrailConfigError,
  GuardrailSet,
} from './guardrail-set.ts';
export { type CheckRequest, type GuardrailProvider, GuardrailProviderError } from './guardrail-types.ts';
export type { SideTexts } from './rule-runner.ts';
