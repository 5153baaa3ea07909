import type { GuardrailProviderType, GuardrailSeverity } from '@gw/shared';
import type { RequestMetadata } from './cel-condition.ts';

/** Which side of the request a check looks at. */
export type GuardrailSide = 'input' | 'output';

/** What one profile is asked: the texts of one side (each message text, each choice), as they are now. */
export interface CheckRequest {
  side: GuardrailSide;
  texts: readonly string[];
  /** Characters checked before these texts (earlier windows of a stream), for length limits. */
  priorLength: number;
  /** The rule the check runs for, and the request's metadata (sent to webhooks). */
  rule: string;
  metadata: RequestMetadata;
  /** Aborted when the rule's time is up or the caller went away. */
  signal: AbortSignal;
}

/** One violation a profile found in one text. */
export interface Detection {
  /** `email`, `keyword`, a pattern's name, a provider's category (`HATE`, `Violence`, …). */
  category: string;
  severity: GuardrailSeverity;
  /** Index of the text in `CheckRequest.texts`; -1 when it concerns them all (length, a provider's verdict). */
  text: number;
  /** Where in the text, when the profile knows (built-in detections). */
  span?: { start: number; end: number };
  /**
   * What replaces the span under a REDACT rule. None: the violation cannot be rewritten, it blocks. A
   * detection without a span that may be rewritten is served by `ProviderVerdict.rewritten`.
   */
  replacement?: string;
  /** The span holds a personal value: shown masked in excerpts, and placeholder-able for reversible rules. */
  personal?: boolean;
  /** For detections without a span: the affected excerpt or the provider's message. */
  excerpt?: string;
}

export interface ProviderVerdict {
  detections: Detection[];
  /** The texts as the provider itself rewrote them (Bedrock's masked output), by index; undefined: unchanged. */
  rewritten?: Array<string | undefined>;
}

/** A guardrail provider: one small file each under providers/, behind this one method. */
export interface GuardrailProvider {
  readonly type: GuardrailProviderType;
  /** Synchronous when the checks need no service (the built-in provider), so no timer is armed for them. */
  check(request: CheckRequest): ProviderVerdict | Promise<ProviderVerdict>;
  close?(): void;
}

/** A failure of a provider (unreachable, refused, malformed answer); what it does is the rule's `on_failure`. */
export class GuardrailProviderError extends Error {
  override name = 'GuardrailProviderError';
}
