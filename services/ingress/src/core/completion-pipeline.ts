import type { IncomingHttpHeaders } from 'node:http';
import type { AuthorizeResult, GovernanceService, SettleRequest } from '@gw/governance';
import type {
  CompleteResult,
  PassthroughRequest,
  PassthroughResponse,
  RouteRequest,
  RouterService,
  StreamItem,
} from '@gw/router';
import { EMPTY_USAGE, type Logger, type Usage } from '@gw/shared';
import { estimateOf, type ParsedCompletion } from './parse-request.ts';
import { findVirtualKey } from './virtual-key-header.ts';

export interface PipelineDependencies {
  governance: GovernanceService;
  router: RouterService;
  logger: Logger;
}

/** A pass-through call as a route hands it to the pipeline (SPEC.md endpoint note 7). */
export interface PassthroughCall {
  requestId: string;
  headers: IncomingHttpHeaders;
  /** The provider and model the call is authorized for (model `*` when the call names none). */
  target: { provider: string; model: string };
  request: Omit<PassthroughRequest, 'requestId' | 'target'>;
  body: AsyncIterable<Uint8Array> | undefined;
  /** Rough size of the upload in tokens, for budget reservations. */
  promptTokens: number;
  signal: AbortSignal;
}

export interface PipelineCall {
  requestId: string;
  headers: IncomingHttpHeaders;
  parsed: ParsedCompletion;
  signal: AbortSignal;
}

interface Outcome {
  provider: string;
  model: string;
  usage: Usage;
}

/**
 * A governed completion, whatever surface it came in by: authorize (DESIGN.md §4 step 2), route, then settle
 * off the critical path exactly once, also when the request failed or the client went away.
 */
export function createCompletionPipeline(dependencies: PipelineDependencies) {
  const { governance, router, logger } = dependencies;
  const pendingSettles = new Set<Promise<void>>();

  /** Retries transient failures; a settle that never lands is charged at its estimate by governance's sweeper. */
  function settleLater(request: SettleRequest): void {
    const attempt = async () => {
      for (let attempt = 0; ; attempt++) {
        try {
          await governance.settle(request);
          return;
        } catch (error) {
          if (attempt >= 4) throw error;
          await new Promise((resolve) => setTimeout(resolve, 50 * 2 ** attempt));
        }
      }
    };
    const pending = attempt()
      .catch((error) =>
        logger.error(
          { err: error, requestId: request.requestId },
          'settle failed; the sweeper will charge the estimate',
        ),
      )
      .finally(() => pendingSettles.delete(pending));
    pendingSettles.add(pending);
  }

  function settle(call: { requestId: string }, plan: AuthorizeResult, outcome: Outcome | undefined): void {
    if (!plan.settlement) return;
    const first = plan.targets[0];
    settleLater({
      requestId: call.requestId,
      settlement: plan.settlement,
      provider: outcome?.provider ?? first?.provider ?? '',
      model: outcome?.model ?? first?.model ?? '',
      usage: outcome?.usage ?? EMPTY_USAGE,
    });
  }

  async function authorize(call: PipelineCall) {
    const { parsed } = call;
    const plan = await governance.authorize({
      requestId: call.requestId,
      kind: 'llm',
      virtualKey: findVirtualKey(call.headers),
      headerNames: Object.keys(call.headers),
      targets: [parsed.target, ...parsed.fallbacks],
      estimate: estimateOf(parsed),
    });
    const routeRequest: RouteRequest = {
      requestId: call.requestId,
      operation: parsed.operation,
      targets: plan.targets,
      params: parsed.params,
    };
    if (parsed.messages) routeRequest.messages = parsed.messages;
    if (parsed.prompt !== undefined) routeRequest.prompt = parsed.prompt;
    if (parsed.input !== undefined) routeRequest.input = parsed.input;
    return { plan, routeRequest };
  }

  return {
    async complete(call: PipelineCall): Promise<CompleteResult> {
      const { plan, routeRequest } = await authorize(call);
      let outcome: Outcome | undefined;
      try {
        const result = await router.complete(routeRequest, { signal: call.signal });
        outcome = result;
        return result;
      } finally {
        settle(call, plan, outcome);
      }
    },

    /**
     * Authorizes before the first item, so a denial is an ordinary error answer; settles with the usage the
     * stream reported once it ends, fails or is abandoned.
     */
    async stream(call: PipelineCall): Promise<AsyncGenerator<StreamItem>> {
      const { plan, routeRequest } = await authorize(call);
      const items = router.stream(routeRequest, { signal: call.signal });
      return (async function* () {
        const outcome: Outcome = { provider: '', model: '', usage: EMPTY_USAGE };
        try {
          for await (const item of items) {
            if (item.provider) outcome.provider = item.provider;
            if (item.model) outcome.model = item.model;
            if (item.usage) outcome.usage = item.usage;
            yield item;
          }
        } finally {
          settle(call, plan, outcome.provider ? outcome : undefined);
        }
      })();
    },

    /**
     * Governance for a call that reaches no model (a token count gw estimates itself): required headers and
     * the key's status, so such answers are not open to callers the gateway would refuse.
     */
    async checkCaller(call: { requestId: string; headers: IncomingHttpHeaders }): Promise<void> {
      await governance.authorize({
        requestId: call.requestId,
        kind: 'meta',
        virtualKey: findVirtualKey(call.headers),
        headerNames: Object.keys(call.headers),
        targets: [],
      });
    },

    /**
     * A pass-through call (SPEC.md endpoint note 7): authorized like a completion; the caller reports the
     * usage the answer carried (or none) through `done` once the answer's body has been relayed.
     */
    async passthrough(
      call: PassthroughCall,
    ): Promise<{ answer: PassthroughResponse; done(usage?: Usage): void }> {
      const plan = await governance.authorize({
        requestId: call.requestId,
        kind: 'llm',
        virtualKey: findVirtualKey(call.headers),
        headerNames: Object.keys(call.headers),
        targets: [call.target],
        estimate: { promptTokens: call.promptTokens },
      });
      const target = plan.targets[0] ?? call.target;
      const request: PassthroughRequest = { ...call.request, requestId: call.requestId, target };
      const settleWith = (usage: Usage | undefined) =>
        settle(call, plan, {
          provider: target.provider,
          model: target.model,
          usage: usage ?? EMPTY_USAGE,
        });
      let answer: PassthroughResponse;
      try {
        answer = await router.passthrough(request, call.body, { signal: call.signal });
      } catch (error) {
        settleWith(undefined);
        throw error;
      }
      let settled = false;
      return {
        answer,
        done(usage) {
          if (settled) return;
          settled = true;
          settleWith(usage);
        },
      };
    },

    /** Waits for background settles (shutdown: after the server stopped taking requests). */
    async drain(): Promise<void> {
      await Promise.allSettled([...pendingSettles]);
    },
  };
}

export type CompletionPipeline = ReturnType<typeof createCompletionPipeline>;
