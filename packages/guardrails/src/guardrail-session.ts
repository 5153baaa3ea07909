import { GatewayError } from '@gw/shared';
import { Placeholders } from './apply-detections.ts';
import type { RequestMetadata } from './cel-condition.ts';
import {
  type GuardrailOutcome,
  highestSeverity,
  type Modification,
  type RuleReport,
  type Violation,
} from './guardrail-outcome.ts';
import type { GuardrailSide } from './guardrail-types.ts';
import { type CompiledRule, runRule, type SideTexts } from './rule-runner.ts';

export interface SessionOptions {
  metadata: RequestMetadata;
  signal: AbortSignal;
  /** Each rule's result on each side, sync or async, as it ends (metrics and logs). */
  report?: (report: RuleReport, violations: readonly Violation[]) => void;
}

const round = (milliseconds: number) => Math.round(milliseconds * 1000) / 1000;

/**
 * The guardrails of one request: the rules selected for it, run on its input before the provider is called
 * and on its output before it is returned. Blocking is a thrown `guardrail_blocked` (446) carrying the
 * violations; changes are returned as new texts and summed up in `outcome()` (246).
 */
export class GuardrailSession {
  private readonly sync: CompiledRule[];
  private readonly async: CompiledRule[];
  private readonly options: SessionOptions;
  private readonly placeholders = new Placeholders();
  private readonly reports: RuleReport[] = [];
  private readonly violations: Violation[] = [];
  private readonly modifications: Modification[] = [];
  private processingMs = 0;

  constructor(rules: readonly CompiledRule[], options: SessionOptions) {
    this.sync = rules.filter((rule) => rule.config.mode === 'sync');
    this.async = rules.filter((rule) => rule.config.mode === 'async');
    this.options = options;
  }

  /** Some rule (sync or async) checks this side. */
  checks(side: GuardrailSide): boolean {
    const has = (rule: CompiledRule) => (side === 'input' ? rule.input : rule.output).length > 0;
    return this.sync.some(has) || this.async.some(has);
  }

  /**
   * The first synchronous rule that checks the input, which may block it: an input gw cannot read (an upload
   * relayed unparsed) is refused in its name rather than let through unchecked.
   */
  get inputGate(): string | undefined {
    return this.sync.find((rule) => rule.input.length > 0)?.config.id;
  }

  /** A synchronous output rule wants a streamed answer held and checked whole. */
  get buffersStreams(): boolean {
    return this.sync.some((rule) => rule.output.length > 0 && rule.config.stream_output === 'buffer');
  }

  /** Characters of streamed text per window: the smallest any output rule asks for. */
  get windowChars(): number {
    const sizes = this.sync
      .filter((rule) => rule.output.length > 0)
      .map((rule) => rule.config.stream_window_chars);
    return sizes.length > 0 ? Math.min(...sizes) : 400;
  }

  /** Input values were replaced by placeholders, which the answer must get back. */
  get restores(): boolean {
    return this.placeholders.size > 0;
  }

  /** The texts as the caller may see them: placeholders of this request put back. */
  restore(text: string): string {
    return this.placeholders.restore(text);
  }

  input(texts: SideTexts): Promise<readonly string[]> {
    return this.run('input', texts);
  }

  output(texts: SideTexts): Promise<readonly string[]> {
    return this.run('output', texts);
  }

  /** The summary of everything checked so far (`extra_fields.guardrails`, the exchange's record). */
  outcome(): GuardrailOutcome {
    const redactions: Record<string, number> = {};
    for (const modification of this.modifications)
      redactions[modification.category] = (redactions[modification.category] ?? 0) + 1;
    const blocked = this.reports.some((report) => report.mode === 'sync' && report.outcome === 'blocked');
    return {
      outcome: blocked ? 'blocked' : this.modifications.length > 0 ? 'warning' : 'pass',
      rules: this.reports,
      violations: this.violations,
      modifications: this.modifications,
      redactions,
      processing_time_ms: round(this.processingMs),
      ...(this.placeholders.size > 0 ? { reversible: true } : {}),
    };
  }

  private async run(side: GuardrailSide, input: SideTexts): Promise<readonly string[]> {
    for (const rule of this.async) {
      if ((side === 'input' ? rule.input : rule.output).length > 0) this.runAsync(rule, side, input);
    }
    let texts = input.texts;
    for (const rule of this.sync) {
      if ((side === 'input' ? rule.input : rule.output).length === 0) continue;
      const run = await runRule(rule, side, {
        input: { ...input, texts },
        metadata: this.options.metadata,
        signal: this.options.signal,
        placeholders: this.placeholders,
      });
      this.processingMs += run.processingMs;
      const report: RuleReport = {
        rule: rule.config.id,
        side,
        mode: 'sync',
        outcome: run.outcome,
        processing_time_ms: round(run.processingMs),
        ...(run.error !== undefined ? { error: run.error } : {}),
      };
      this.reports.push(report);
      this.violations.push(...run.violations);
      this.options.report?.(report, run.violations);
      if (run.outcome === 'blocked') throw this.blocked(rule.config.id, side, run.violations);
      if (run.outcome === 'warning') {
        this.modifications.push(...run.modifications);
        texts = run.texts;
      }
    }
    return texts;
  }

  /** A log-only rule: beside the request, on its own copy of the texts; it never changes or delays anything. */
  private runAsync(rule: CompiledRule, side: GuardrailSide, input: SideTexts): void {
    const texts = [...input.texts];
    runRule(rule, side, {
      input: { ...input, texts },
      metadata: this.options.metadata,
      // The caller going away does not cancel a log-only check: its record is the point.
      signal: new AbortController().signal,
    }).then(
      (run) => {
        const flagged = run.outcome === 'blocked' || run.outcome === 'warning';
        const report: RuleReport = {
          rule: rule.config.id,
          side,
          mode: 'async',
          outcome: flagged ? 'flagged' : run.outcome,
          processing_time_ms: round(run.processingMs),
          ...(run.error !== undefined ? { error: run.error } : {}),
        };
        this.reports.push(report);
        this.options.report?.(report, run.violations);
      },
      () => undefined,
    );
  }

  private blocked(rule: string, side: GuardrailSide, violations: readonly Violation[]): GatewayError {
    const severity = highestSeverity(violations);
    const kinds = [...new Set(violations.map((violation) => violation.category))].join(', ');
    return new GatewayError({
      type: 'guardrail_blocked',
      message: `guardrail rule '${rule}' blocked the ${side}: ${kinds} (severity ${severity})`,
      code: rule,
      extra: { guardrails: { ...this.outcome(), outcome: 'blocked', side, severity } },
    });
  }
}
