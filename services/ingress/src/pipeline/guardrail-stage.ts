import type { IncomingHttpHeaders } from 'node:http';
import type { AuthorizeResult } from '@gw/governance';
import {
  type GuardrailOutcome,
  GuardrailSession,
  type GuardrailSet,
  type RuleReport,
  type Violation,
} from '@gw/guardrails';
import type { CompletionResult } from '@gw/router';
import { GatewayError, type Logger, type Metrics } from '@gw/shared';
import { noteAsyncFinding, type RequestLogDraft } from '../request/request-log.ts';
import { BlockedAnswerError } from './blocked-answer-error.ts';
import { jsonTexts, rewriteJson } from './guardrail-json-texts.ts';
import { guardStream } from './guardrail-stream.ts';
import { embeddingsInputTexts, inputTexts, outputTexts, requestMetadata } from './guardrail-texts.ts';
import { type CompletionExchange, type Exchange, type Stage, translatedRoute } from './stage.ts';

/** `x-gw-guardrail-id`: one rule id, or several separated by commas. */
const RULE_HEADER = 'x-gw-guardrail-id';

/** Distinct rule ids one process labels metrics with; past it they count as `other`. */
const RULE_LABELS = 100;

export interface GuardrailDependencies {
  /** The set in force (the runtime swaps it when the admin API changes guardrails). */
  runtime: { readonly current: GuardrailSet };
  metrics: Metrics;
  logger: Logger;
}

function requestedRules(headers: IncomingHttpHeaders): string[] | undefined {
  const value = headers[RULE_HEADER];
  if (value === undefined) return undefined;
  const ids = (Array.isArray(value) ? value.join(',') : value)
    .split(',')
    .map((id) => id.trim())
    .filter(Boolean);
  return ids.length > 0 ? ids : undefined;
}

/**
 * Guardrails for ingress (docs/guardrails.md): a session per request whose rules apply, opened for
 * completions by the stage and for MCP tool calls by their route. With no rule in force, opening costs one
 * property read and nothing else.
 */
export function createGuardrails(dependencies: GuardrailDependencies) {
  const { metrics, logger } = dependencies;
  const ruleLabels = new Set<string>();
  const ruleLabel = (rule: string) => {
    if (ruleLabels.has(rule)) return rule;
    if (ruleLabels.size >= RULE_LABELS) return 'other';
    ruleLabels.add(rule);
    return rule;
  };

  function report(requestId: string, log: RequestLogDraft | undefined) {
    return (result: RuleReport, violations: readonly Violation[]) => {
      metrics.guardrailOutcomes.inc({ rule: ruleLabel(result.rule), outcome: result.outcome });
      // What the metric counts, the request's record says too, also when it was written already.
      if (result.mode === 'async' && result.outcome === 'flagged') noteAsyncFinding(log);
      metrics.guardrailDuration.observe(
        { side: result.side, mode: result.mode },
        result.processing_time_ms / 1000,
      );
      if (result.outcome === 'pass') return;
      // Never the content: the rule, the side, what kinds were found.
      const categories = [...new Set(violations.map((violation) => violation.category))];
      const level = result.outcome === 'error' ? 'warn' : 'info';
      logger[level]({ requestId, ...result, categories }, 'guardrail outcome');
    };
  }

  /** A session for a request, or undefined when no rule applies to it. */
  function open(options: {
    requestId: string;
    headers: IncomingHttpHeaders;
    authorization: AuthorizeResult | undefined;
    signal: AbortSignal;
    request_type: 'chat' | 'text' | 'tool';
    target?: { provider: string; model: string } | undefined;
    tool?: { client: string; tool: string; arguments: Record<string, unknown> };
    /** The request's log draft (logs on): async findings reach its record. */
    log?: RequestLogDraft | undefined;
  }): GuardrailSession | undefined {
    const set = dependencies.runtime.current;
    if (set.empty) return undefined;
    const metadata = requestMetadata(options);
    const requested = requestedRules(options.headers);
    const rules = set.select(metadata, {
      ...(requested ? { requested } : {}),
      onConditionError: (rule) =>
        metrics.guardrailOutcomes.inc({ rule: ruleLabel(rule), outcome: 'condition_error' }),
    });
    if (rules.length === 0) return undefined;
    return new GuardrailSession(rules, {
      metadata,
      signal: options.signal,
      report: report(options.requestId, options.log),
    });
  }

  /** Embeddings inputs are checked as `request_type == "text"`. */
  function openFor(exchange: Exchange): GuardrailSession | undefined {
    return open({
      requestId: exchange.requestId,
      headers: exchange.headers,
      authorization: exchange.authorization,
      signal: exchange.signal,
      request_type: exchange.route.operation === 'chat' ? 'chat' : 'text',
      target: exchange.route.targets[0],
      log: exchange.log,
    });
  }

  /** Input before the provider is called: a block throws 446, a change goes to the provider instead. */
  async function guardInput(exchange: CompletionExchange, session: GuardrailSession): Promise<void> {
    if (!session.checks('input')) return;
    const editable = inputTexts(exchange.route);
    const texts = await session.input(editable);
    // A changed text lives in the translation only, so the provider gets the translation.
    if (texts !== editable.texts) exchange.route = translatedRoute(editable.rewrite(texts));
  }

  /**
   * A pass-through call's input (docs/guardrails.md "Pass-through"): a JSON body's texts are checked as a
   * request's are (answers the body to send when a rule changed it); a body gw does not read (multipart,
   * binary) is refused with a 446 while a synchronous rule with input checks applies, since it would reach the
   * provider unchecked. A call without a body has no input.
   */
  async function passthroughInput(call: {
    requestId: string;
    headers: IncomingHttpHeaders;
    authorization: AuthorizeResult;
    signal: AbortSignal;
    operation: string;
    target: { provider: string; model: string };
    content: PassthroughContent;
  }): Promise<Record<string, unknown> | undefined> {
    if (call.content === undefined) return undefined;
    const session = open({ ...call, request_type: call.operation === 'responses' ? 'chat' : 'text' });
    if (!session?.checks('input')) return undefined;
    if (call.content === 'opaque') {
      const rule = session.inputGate;
      if (rule === undefined) return undefined;
      throw new GatewayError({
        type: 'guardrail_blocked',
        code: rule,
        message:
          `guardrail rule '${rule}' checks inputs, and this ${call.operation} call's body is relayed unread ` +
          '(not JSON): it cannot be checked, so it is refused',
      });
    }
    const editable = jsonTexts(call.content.json);
    const texts = await session.input(editable);
    if (texts === editable.texts) return undefined;
    return rewriteJson(call.content.json, editable.slots, texts);
  }

  /** The outcome as the answer shows it (`extra_fields.guardrails`). */
  const shown = (outcome: GuardrailOutcome) => outcome as unknown as Record<string, unknown>;

  const stage: Stage = {
    name: 'guardrail',

    async complete(exchange, next): Promise<CompletionResult> {
      const session = openFor(exchange);
      if (!session) return next();
      try {
        await guardInput(exchange, session);
        const result = await next();
        let { response } = result;
        let changed = false;
        if (session.checks('output') || session.restores) {
          const editable = outputTexts(response);
          const served = { provider: result.provider, model: response.model, usage: response.usage };
          let texts = session.checks('output')
            ? await session.output(editable).catch((error: unknown) => {
                throw error instanceof GatewayError ? new BlockedAnswerError(error, served) : error;
              })
            : editable.texts;
          if (session.restores) texts = texts.map((text) => session.restore(text));
          changed = texts.some((text, index) => text !== editable.texts[index]);
          if (changed) response = editable.rewrite(texts);
        }
        const outcome = session.outcome();
        // The checks' time is reported as processing_time_ms in the answer's metadata (docs/guardrails.md).
        const extra_fields = {
          ...response.extra_fields,
          processing_time_ms: outcome.processing_time_ms,
          guardrails: shown(outcome),
        };
        return {
          provider: result.provider,
          servedBy: result.servedBy,
          response: { ...response, extra_fields },
          // The provider's own answer stands only while nothing in it was changed.
          ...(result.native !== undefined && !changed ? { native: result.native } : {}),
        };
      } finally {
        exchange.guardrail = session.outcome();
      }
    },

    async embed(exchange, next) {
      const session = openFor(exchange);
      if (!session) return next();
      try {
        if (session.checks('input')) {
          const editable = embeddingsInputTexts(exchange.route);
          const texts = await session.input(editable);
          if (texts !== editable.texts) exchange.route = editable.rewrite(texts);
        }
        return await next();
      } finally {
        exchange.guardrail = session.outcome();
      }
    },

    async stream(exchange, next) {
      const session = openFor(exchange);
      if (!session) return next();
      const end = () => {
        exchange.guardrail = session.outcome();
      };
      try {
        await guardInput(exchange, session);
        const check = session.checks('output');
        // Output checks read the translated chunks; the provider's native events could not be changed.
        if (check || session.restores) exchange.route = translatedRoute(exchange.route);
        const items = await next();
        return guardStream(items, {
          session,
          check,
          buffered: check && session.buffersStreams,
          // Without output checks a chunk goes on at once, unless it ends inside a placeholder.
          windowChars: check ? session.windowChars : 0,
          end,
          summary: () => shown(session.outcome()),
        });
      } catch (error) {
        end();
        throw error;
      }
    },
  };

  return { stage, open, passthroughInput };
}

/** What a pass-through call's body is to the guardrails: its JSON, `opaque` (multipart, binary), or none. */
export type PassthroughContent = { json: Record<string, unknown> } | 'opaque' | undefined;

export type IngressGuardrails = ReturnType<typeof createGuardrails>;
