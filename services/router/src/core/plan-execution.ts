import {
  type ChatCompletionChunk,
  GatewayError,
  invalidRequest,
  isTransient,
  type Metrics,
  type Operation,
  redactJson,
  redactText,
  requestCancelled,
  toGatewayError,
} from '@gw/shared';
import { backoffMs, sleep } from './backoff.ts';
import type { HealthTracker } from './health.ts';
import { selectKey } from './key-selector.ts';
import { adapterMethod, type MethodOf } from './operation-dispatch.ts';
import type { ProviderConfigs } from './provider-configs.ts';
import type { LoadedProvider } from './provider-registry.ts';
import { type AdapterContext, NativePiece } from './providers/adapter.ts';
import type { RouteTarget, StreamItem } from './router-service.ts';
import { isCancellation, type UpstreamClient } from './upstream-client.ts';

export interface Attempted<T> {
  value: T;
  provider: LoadedProvider;
  startedAt: number;
}

/** One attempt at one target: the call of the adapter's method for the operation, in the attempt's context. */
export type Attempt<O extends Operation, T> = (
  method: MethodOf<O>,
  target: RouteTarget,
  context: AdapterContext,
) => Promise<T>;

/** What one request may cost upstream: its fallbacks, and its calls across targets and retries together. */
export interface PlanLimits {
  maxFallbacks: number;
  maxAttempts: number;
}

/** client.max_fallbacks and client.max_attempts by default. */
export const DEFAULT_PLAN_LIMITS: PlanLimits = { maxFallbacks: 5, maxAttempts: 10 };

export interface PlanExecutionDependencies {
  providers: ProviderConfigs;
  http: UpstreamClient;
  metrics: Metrics;
  health: HealthTracker;
  limits: PlanLimits;
  random?: (() => number) | undefined;
}

/**
 * An upstream's error as gw may relay and log it: upstreams echo what they were sent (a key in "Incorrect API
 * key provided: sk-…", a header in a proxy's error page), so every credential of the provider and anything
 * shaped like a key is taken out of the message and the upstream body.
 */
function withoutSecrets(error: GatewayError, provider: LoadedProvider): GatewayError {
  if (isCancellation(error)) return error;
  return new GatewayError({
    ...error.toJSON(),
    message: redactText(error.message, provider.secrets),
    upstreamBody: redactJson(error.upstreamBody, provider.secrets),
    // The cause of an upstream's answer is that answer: not kept, it would carry the echo into logs.
    cause: error.upstream ? undefined : error.cause,
  });
}

/** A piece relayed verbatim is already an item; a plain chunk is wrapped. */
function streamItem(value: ChatCompletionChunk | NativePiece): StreamItem {
  return value instanceof NativePiece ? value : { chunk: value };
}

/**
 * Executes a routing plan (DESIGN.md §4 step 3): targets in order (the first, then fallbacks), each with
 * key selection and retries with exponential backoff and jitter on transient errors only.
 */
export class PlanExecution {
  private readonly dependencies: PlanExecutionDependencies;

  constructor(dependencies: PlanExecutionDependencies) {
    this.dependencies = dependencies;
  }

  /**
   * Tries each target in order, each with retries, within the request's limits (a plan with more fallbacks
   * than allowed is refused before any call; calls stop when the attempt budget is spent); answers the first
   * success.
   */
  async acrossTargets<O extends Operation, T>(options: {
    targets: RouteTarget[];
    signal: AbortSignal;
    operation: O;
    attempt: Attempt<O, T>;
  }): Promise<Attempted<T>> {
    const { maxFallbacks, maxAttempts } = this.dependencies.limits;
    const fallbacks = options.targets.length - 1;
    if (fallbacks > maxFallbacks) {
      throw invalidRequest(
        `fallbacks: ${fallbacks} given, at most ${maxFallbacks} are allowed (client.max_fallbacks)`,
        'fallbacks',
      );
    }
    const budget = { attempts: maxAttempts };
    const failures: Array<{ target: RouteTarget; error: GatewayError }> = [];
    for (const [index, target] of options.targets.entries()) {
      if (budget.attempts === 0) break;
      try {
        const attempted = await this.withRetries(target, { ...options, budget });
        if (index > 0) this.dependencies.metrics.fallbacks.inc({ provider: target.provider });
        return attempted;
      } catch (error) {
        const failure = toGatewayError(error);
        if (isCancellation(failure)) throw failure;
        failures.push({ target, error: failure.withTarget(target.provider, target.model) });
      }
    }
    if (failures.length === 1) throw failures[0]!.error;
    const last = failures[failures.length - 1]!.error;
    throw new GatewayError({
      type: 'all_targets_failed',
      status: last.status,
      message: `all ${failures.length} targets failed: ${failures
        .map(({ target, error }) => `${target.provider}/${target.model}: ${error.message}`)
        .join('; ')}`,
      provider: last.provider,
      model: last.model,
      retryAfter: last.retryAfter,
      upstreamBody: last.upstreamBody,
    });
  }

  /**
   * A stream along the plan. Its first chunk is awaited inside the retry loop, so a stream that fails before
   * producing anything is retried and falls back like any call; a failure after it ends the stream.
   */
  async *streamAcrossTargets<O extends 'chat_stream' | 'text_stream'>(options: {
    targets: RouteTarget[];
    signal: AbortSignal;
    operation: O;
    open: (
      method: MethodOf<O>,
      target: RouteTarget,
      context: AdapterContext,
    ) => AsyncIterable<ChatCompletionChunk | NativePiece>;
  }): AsyncGenerator<StreamItem> {
    const { value, provider } = await this.acrossTargets({
      ...options,
      attempt: async (method, target, context) => {
        const iterator = options.open(method, target, context)[Symbol.asyncIterator]();
        return { iterator, first: await iterator.next() };
      },
    });
    const { iterator, first } = value;
    if (first.done) return;
    const firstItem = streamItem(first.value);
    yield { ...firstItem, provider: provider.name };
    try {
      for (let next = await iterator.next(); !next.done; next = await iterator.next()) {
        yield streamItem(next.value);
      }
    } catch (error) {
      const failure = withoutSecrets(toGatewayError(error), provider);
      if (!isCancellation(failure)) this.recordFailure(provider.name, failure);
      throw failure.withTarget(provider.name, firstItem.chunk.model);
    } finally {
      await iterator.return?.();
    }
  }

  private async withRetries<O extends Operation, T>(
    target: RouteTarget,
    options: {
      signal: AbortSignal;
      operation: O;
      attempt: Attempt<O, T>;
      /** Calls the request may still make (shared by its targets). */
      budget: { attempts: number };
    },
  ): Promise<Attempted<T>> {
    const { http, metrics, random } = this.dependencies;
    const { signal, operation } = options;
    const provider = this.dependencies.providers.resolve(target.provider);
    const method = adapterMethod(provider.adapter, provider.name, operation);
    const network = provider.config.network_config;
    const excluded = new Set<string>();
    for (let attempt = 0; ; attempt++) {
      const key = selectKey(
        provider.keys,
        { model: target.model, allowedIds: target.keyIds, excluded },
        random,
      );
      if (!key && !provider.adapter.capabilities.authOptional) {
        throw new GatewayError({
          type: 'provider_not_configured',
          message: `provider '${provider.name}' has no key that may serve model '${target.model}'`,
          provider: provider.name,
          model: target.model,
        });
      }
      const context: AdapterContext = {
        provider: provider.name,
        http,
        baseUrl: provider.baseUrl,
        key,
        network,
        timeoutMs: network.model_timeouts_ms[target.model] ?? network.timeout_ms,
        signal,
      };
      const startedAt = performance.now();
      options.budget.attempts--;
      try {
        const value = await options.attempt(method, target, context);
        metrics.upstreamDuration.observe(
          { provider: provider.name, operation },
          (performance.now() - startedAt) / 1000,
        );
        this.dependencies.health.record(provider.name, true);
        return { value, provider, startedAt };
      } catch (error) {
        const failure = withoutSecrets(toGatewayError(error), provider);
        if (isCancellation(failure)) throw failure;
        this.recordFailure(provider.name, failure);
        const rotatesKey = failure.upstream && [401, 403, 429].includes(failure.status);
        if (key && rotatesKey) excluded.add(key.id);
        const anotherKey = rotatesKey && provider.keys.some((candidate) => !excluded.has(candidate.id));
        const retryable =
          isTransient(failure) || (anotherKey && (failure.status === 401 || failure.status === 403));
        if (!retryable || attempt >= network.max_retries || options.budget.attempts === 0) throw failure;
        metrics.retries.inc({ provider: provider.name });
        await sleep(
          backoffMs({
            attempt,
            initialMs: network.retry_backoff_initial_ms,
            maxMs: network.retry_backoff_max_ms,
            retryAfterSeconds: anotherKey ? undefined : failure.retryAfter,
          }),
          signal,
        ).catch(() => {
          throw requestCancelled();
        });
      }
    }
  }

  /** Counts a failed attempt against the provider's health and in the error metrics. */
  private recordFailure(provider: string, failure: GatewayError): void {
    this.dependencies.health.record(provider, false);
    this.dependencies.metrics.upstreamErrors.inc({
      provider,
      type: failure.type,
      status: String(failure.status),
    });
  }
}
