import { setTimeout as sleep } from 'node:timers/promises';
import type { Admission, AuthorizeResult, SettleRequest, SettleResult, SideCall } from '@gw/governance';
import type { StreamItem } from '@gw/router';
import {
  type ChatCompletionChunk,
  EMPTY_USAGE,
  GatewayError,
  type Logger,
  observeStream,
  UnansweredCallError,
  type Usage,
} from '@gw/shared';
import type { TraceContext, TraceSpan } from '@gw/shared/tracing';
import { tokensOfLength } from '../request/estimate-tokens.ts';
import { BlockedAnswerError } from './blocked-answer-error.ts';
import type { CompletionExchange, Exchange, Stage } from './stage.ts';

/** Who served a request and what it used; undefined when nothing was served. */
export interface Outcome {
  provider: string;
  model: string;
  usage: Usage;
}

/** The request a settle is for: its id, its authorization and, when it is traced, its span. */
export interface SettleSubject {
  requestId: string;
  authorization: AuthorizeResult;
  span?: TraceSpan | undefined;
  /** Calls made for the request besides its answer (the cache's embedding): charged with it. */
  sideCalls?: readonly SideCall[] | undefined;
}

/** Most time between two tries of a settle that failed for want of governance or Redis. */
const MAX_SETTLE_BACKOFF_MS = 5_000;

/**
 * Settlement off the critical path (docs/governance.md "Exactness and settlement"): a settle that fails because governance or Redis is
 * unavailable is retried with backoff for as long as its reservation lives (until the sweeper would charge
 * the estimate instead), so a request is charged what it used whenever that is known. When the process
 * stops, retries stop too and the sweeper charges what is left at its estimate.
 */
export function createSettler(dependencies: { admission: Admission; logger: Logger }) {
  const { admission, logger } = dependencies;
  const pending = new Set<Promise<SettleResult | undefined>>();
  const stopping = new AbortController();

  /**
   * Retries what may succeed later (governance or Redis unavailable). A refusal is final, and a reservation
   * that is no longer open on a retry was settled by an earlier attempt whose answer was lost.
   */
  async function settleWithRetries(
    request: SettleRequest,
    trace: TraceContext | undefined,
  ): Promise<SettleResult | undefined> {
    const until = request.settlement.deadlineMs ?? Date.now();
    for (let attempt = 0; ; attempt++) {
      try {
        return await admission.settle(request, { trace });
      } catch (error) {
        const refused = error instanceof GatewayError && error.status < 500;
        if (refused && attempt > 0 && error.type === 'not_found') return undefined;
        const waitMs = Math.min(MAX_SETTLE_BACKOFF_MS, 50 * 2 ** attempt);
        if (refused || stopping.signal.aborted || Date.now() + waitMs >= until) throw error;
        await sleep(waitMs, undefined, { signal: stopping.signal }).catch(() => {});
      }
    }
  }

  return {
    /**
     * Charges what the request used (nothing served: the reservation is released), with the side calls made
     * for it (a cache lookup's embedding). Never throws. The request's span, when it is traced, is the parent
     * of governance's settle span. Answers what governance charged (US dollars, and what for) once it has, for
     * the request log (undefined when the settle failed); nothing for a request without a settlement (no
     * virtual key).
     */
    settle(
      subject: SettleSubject,
      outcome: Outcome | undefined,
    ): Promise<SettleResult | undefined> | undefined {
      const { requestId, authorization, sideCalls } = subject;
      if (!authorization.settlement) return undefined;
      const first = authorization.targets[0];
      const request: SettleRequest = {
        requestId,
        settlement: authorization.settlement,
        provider: outcome?.provider ?? first?.provider ?? '',
        model: outcome?.model ?? first?.model ?? '',
        usage: outcome?.usage ?? EMPTY_USAGE,
        ...(sideCalls && sideCalls.length > 0 && { calls: [...sideCalls] }),
      };
      const attempt = settleWithRetries(request, subject.span?.context)
        .catch((error) => {
          logger.error({ err: error, requestId }, 'settle failed; the sweeper will charge the estimate');
          return undefined;
        })
        .finally(() => pending.delete(attempt));
      pending.add(attempt);
      return attempt;
    },

    /**
     * Waits for background settles (shutdown: after the server stopped taking requests); those still waiting
     * to retry give up, for the sweeper.
     */
    async drain(): Promise<void> {
      stopping.abort();
      await Promise.allSettled([...pending]);
    },
  };
}

export type Settler = ReturnType<typeof createSettler>;

/** Characters of generated text a chunk carries: content, refusal, tool-call arguments, legacy text. */
function generatedChars(chunk: ChatCompletionChunk): number {
  let chars = 0;
  for (const choice of chunk.choices) {
    chars +=
      (choice.text?.length ?? 0) +
      (choice.delta?.content?.length ?? 0) +
      (choice.delta?.refusal?.length ?? 0);
    for (const call of choice.delta?.tool_calls ?? []) {
      chars += (call.function?.name?.length ?? 0) + (call.function?.arguments?.length ?? 0);
    }
  }
  return chars;
}

/**
 * Usage of a stream the upstream never reported on: the prompt tokens admission estimated (the request was
 * sent whole) and about one token per four characters relayed (the rule of thumb of BPE tokenizers on
 * English text; never zero when something was relayed).
 */
function relayedUsage(exchange: CompletionExchange, relayedChars: number): Usage {
  const promptTokens = exchange.authorization.settlement?.estimate.usage.prompt_tokens ?? 0;
  const completionTokens = tokensOfLength(relayedChars);
  return {
    prompt_tokens: promptTokens,
    completion_tokens: completionTokens,
    total_tokens: promptTokens + completionTokens,
  };
}

/** What a completion cancelled by its caller used: the prompt admission estimated, on the first target. */
function cancelledOutcome(exchange: CompletionExchange): Outcome | undefined {
  const target = exchange.authorization.targets[0];
  if (!target) return undefined;
  return { provider: target.provider, model: target.model, usage: relayedUsage(exchange, 0) };
}

/**
 * A call sent to a router that then went silent (killed, frozen, or past its deadline) is not settled here: what
 * it cost is known only to the router, which may still be calling the upstream. Its reservation is left to the
 * sweeper, which charges it at the settle deadline from what the router reported of the call (the answer's usage;
 * nothing when it never reached the upstream), or at the admission estimate when no report came
 * (docs/governance.md "Lost calls").
 */
function lost(error: unknown): boolean {
  return error instanceof UnansweredCallError;
}

/** The request log's cost is governance's charge: the draft keeps the settle's answer. */
function charged(exchange: Exchange, charge: Promise<SettleResult | undefined> | undefined): void {
  if (exchange.log && charge) exchange.log.charge = charge;
}

/**
 * Settle: charges every request exactly once with what it used, also when it failed or the client went away
 * mid-stream. Outermost stage after authorize, so it sees the usage of everything inside (all agent rounds).
 */
export function settleStage(settler: Settler): Stage {
  return {
    name: 'settle',
    async complete(exchange, next) {
      let outcome: Outcome | undefined;
      let settled = true;
      try {
        const result = await next();
        outcome = { provider: result.provider, model: result.response.model, usage: result.response.usage };
        return result;
      } catch (error) {
        // The caller hung up while the upstream worked on it: the prompt was sent and is billed upstream.
        if (error instanceof GatewayError && error.type === 'cancelled') outcome = cancelledOutcome(exchange);
        if (lost(error)) settled = false;
        // A guardrail blocked an answer the provider generated: what it used is charged.
        if (error instanceof BlockedAnswerError) outcome = error.served;
        throw error;
      } finally {
        if (settled) charged(exchange, settler.settle(exchange, outcome));
      }
    },
    async embed(exchange, next) {
      let outcome: Outcome | undefined;
      let settled = true;
      try {
        const result = await next();
        const { usage, model } = result.response;
        outcome = {
          provider: result.provider,
          model,
          usage: {
            prompt_tokens: usage.prompt_tokens,
            completion_tokens: 0,
            total_tokens: usage.total_tokens,
          },
        };
        return result;
      } catch (error) {
        if (lost(error)) settled = false;
        throw error;
      } finally {
        if (settled) charged(exchange, settler.settle(exchange, outcome));
      }
    },
    async stream(exchange, next) {
      let items: AsyncIterable<StreamItem>;
      try {
        items = await next();
      } catch (error) {
        if (!lost(error)) charged(exchange, settler.settle(exchange, undefined));
        throw error;
      }
      const outcome: Outcome = { provider: '', model: '', usage: EMPTY_USAGE };
      let reported = false;
      let relayedChars = 0;
      return observeStream(items, {
        item(item) {
          if (item.provider) outcome.provider = item.provider;
          if (!outcome.model) outcome.model = item.chunk.model;
          if (item.chunk.usage) {
            outcome.usage = item.chunk.usage;
            reported = true;
          } else relayedChars += generatedChars(item.chunk);
        },
        end: (error) => {
          // A stream that ended before its usage (the client hung up, the upstream failed) is charged for what
          // was relayed: the prompt as admission estimated it, the answer by its length; one whose router went
          // silent before anything was relayed is left to the sweeper (`lost`).
          if (!reported && relayedChars > 0) outcome.usage = relayedUsage(exchange, relayedChars);
          if (!outcome.provider && lost(error)) return;
          charged(exchange, settler.settle(exchange, outcome.provider ? outcome : undefined));
        },
      });
    },
  };
}
