import type { GuardrailRule } from '@gw/shared';
import { applySpans, excerptOf, type Placeholders } from './apply-detections.ts';
import type { RequestMetadata } from './cel-condition.ts';
import type { Modification, RuleOutcome, Violation } from './guardrail-outcome.ts';
import type { Detection, GuardrailProvider, GuardrailSide, ProviderVerdict } from './guardrail-types.ts';

/** A profile as a compiled rule holds it. */
export interface CompiledProfile {
  id: string;
  provider: GuardrailProvider;
  /** Needs a service: its checks are raced against the rule's timeout. */
  remote: boolean;
}

/** A rule with its condition compiled and its profiles resolved (disabled profiles left out). */
export interface CompiledRule {
  config: GuardrailRule;
  condition: (metadata: RequestMetadata) => boolean;
  input: CompiledProfile[];
  output: CompiledProfile[];
}

/** The texts of one side and where each sits in the request (`messages[0].content`). */
export interface SideTexts {
  texts: readonly string[];
  locations: readonly string[];
  priorLength?: number;
}

export interface RuleRun {
  outcome: RuleOutcome;
  /** The texts after the rule's redactions (the same array when nothing changed). */
  texts: readonly string[];
  violations: Violation[];
  modifications: Modification[];
  error?: string;
  processingMs: number;
}

class RuleTimeout extends Error {}

function withTimeout<Value>(
  work: Promise<Value>,
  milliseconds: number,
  abort: AbortController,
): Promise<Value> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => {
      abort.abort();
      reject(new RuleTimeout(`timed out after ${milliseconds} ms`));
    }, milliseconds);
  });
  return Promise.race([work, expired]).finally(() => clearTimeout(timer));
}

/**
 * One rule on one side: its profiles in order, each on the texts the previous one left (layered checks). A
 * BLOCK rule blocks on any violation; a REDACT rule rewrites what can be rewritten and blocks on the rest.
 * A failing or timed-out check follows `on_failure`.
 */
export async function runRule(
  rule: CompiledRule,
  side: GuardrailSide,
  options: { input: SideTexts; metadata: RequestMetadata; signal: AbortSignal; placeholders?: Placeholders },
): Promise<RuleRun> {
  const started = performance.now();
  const { config } = rule;
  const profiles = side === 'input' ? rule.input : rule.output;
  const { locations } = options.input;
  let texts = options.input.texts;
  const violations: Violation[] = [];
  const modifications: Modification[] = [];
  const finish = (outcome: RuleOutcome, error?: string): RuleRun => ({
    outcome,
    texts,
    violations,
    modifications,
    processingMs: performance.now() - started,
    ...(error !== undefined ? { error } : {}),
  });
  // One timer for the whole rule, armed only when a profile needs a service.
  const remote = profiles.some((profile) => profile.remote);
  const abort = remote ? new AbortController() : undefined;
  const signal = abort ? AbortSignal.any([options.signal, abort.signal]) : options.signal;
  const deadline = started + config.timeout_ms;

  for (const profile of profiles) {
    let verdict: ProviderVerdict;
    try {
      const pending = profile.provider.check({
        side,
        texts,
        priorLength: options.input.priorLength ?? 0,
        rule: config.id,
        metadata: options.metadata,
        signal,
      });
      verdict =
        pending instanceof Promise
          ? await withTimeout(
              pending,
              Math.max(1, deadline - performance.now()),
              abort ?? new AbortController(),
            )
          : pending;
    } catch (error) {
      const message = `profile '${profile.id}': ${error instanceof RuleTimeout ? 'the check ' : ''}${(error as Error).message}`;
      if (config.on_failure === 'allow') return finish('error', message);
      violations.push({
        rule: config.id,
        profile: profile.id,
        side,
        category: error instanceof RuleTimeout ? 'timeout' : 'provider_error',
        severity: 'high',
        location: '*',
        excerpt: message,
      });
      return finish('blocked', message);
    }
    if (verdict.detections.length === 0) continue;
    const located = (detection: Detection) => ({
      rule: config.id,
      profile: profile.id,
      side,
      category: detection.category,
      location: detection.text >= 0 ? (locations[detection.text] ?? '*') : '*',
    });
    for (const detection of verdict.detections) {
      violations.push({
        ...located(detection),
        severity: detection.severity,
        excerpt: excerptOf(detection, texts),
      });
    }
    // A detection without a span is rewritten by the provider's own text: of its text, or of all of them.
    const rewritten = verdict.rewritten;
    const rewritable = (detection: Detection) =>
      detection.replacement !== undefined &&
      (detection.span !== undefined ||
        (detection.text >= 0
          ? rewritten?.[detection.text] !== undefined
          : rewritten?.every((text) => text !== undefined) === true));
    if (config.action === 'BLOCK' || !verdict.detections.every(rewritable)) return finish('blocked');
    const spans = applySpans(texts, verdict.detections, config.reversible ? options.placeholders : undefined);
    texts = spans.map((text, index) => rewritten?.[index] ?? text);
    for (const detection of verdict.detections) {
      modifications.push({ ...located(detection), replacement: detection.replacement! });
    }
  }
  return finish(modifications.length > 0 ? 'warning' : 'pass');
}
