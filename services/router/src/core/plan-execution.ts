import {
  type ClientConfig,
  GatewayError,
  invalidRequest,
  isTransient,
  type Live,
  MAX_ATTEMPT_MESSAGE,
  MAX_TARGET_ATTEMPTS,
  type Metrics,
  type Operation,
  redactJson,
  redactText,
  requestCancelled,
  type TargetAttempt,
  toGatewayError,
} from '@gw/shared';
import { type HealthBoard, healthId } from '@gw/shared/health';
import type { TraceContext, Tracer } from '@gw/shared/tracing';
import { endFailedAttempt, startAttemptSpan } from './attempt-span.ts';
import { backoffMs, sleep } from './backoff.ts';
import type { CallTally } from './call-reports.ts';
import { healthOutcome } from './health-outcome.ts';
import { selectKey } from './key-selector.ts';
import { adapterMethod, type MethodOf } from './operation-dispatch.ts';
import type { ProviderConfigs } from './provider-configs.ts';
import type { ProviderGates, Release } from './provider-gate.ts';
import type { LoadedProvider } from './provider-registry.ts';
import { type AdapterContext, NativePiece, type StreamPiece, VerbatimChunk } from './providers/adapter.ts';
import type { RouteTarget, StreamItem } from './router-service.ts';
import { StreamMeasure } from './stream-measure.ts';
import { isCancellation, type UpstreamClient } from './upstream-client.ts';

export interface Attempted<T> {
  value: T;
  provider: LoadedProvider;
  startedAt: number;
  /** The key that served (health is recorded against it). */
  keyId: string | undefined;
  /** The model the served target named (health is recorded against it; an answer may name another). */
  model: string;
  /** The served target's place in the plan as the caller gave it (health may have tried it in another order). */
  fallbackIndex: number;
  /**
   * The targets that failed before the one that served, each with its error (its log record lists them); absent
   * when none did (the usual case: nothing is allocated for it).
   */
  failedBefore?: TargetAttempt[] | undefined;
  /** Frees the provider's concurrency place: at once for a whole answer, when a stream ends for a stream. */
  release: Release;
}

/** One attempt at one target: the call of the adapter's method for the operation, in the attempt's context. */
export type Attempt<O extends Operation, T> = (
  method: MethodOf<O>,
  target: RouteTarget,
  context: AdapterContext,
) => Promise<T>;

/**
 * What one request may cost upstream (`client.max_fallbacks`, `client.max_attempts`): its fallbacks, and its
 * calls across targets and retries together. Read at each request.
 */
export type PlanLimits = Live<Pick<ClientConfig, 'max_fallbacks' | 'max_attempts'>>;

export interface PlanExecutionDependencies {
  providers: ProviderConfigs;
  http: UpstreamClient;
  metrics: Metrics;
  /** The process's environment, handed to adapters in each attempt's context. */
  environment: NodeJS.ProcessEnv;
  health: HealthBoard;
  gates: ProviderGates;
  limits: PlanLimits;
  random?: (() => number) | undefined;
  /** A span per upstream attempt; none when tracing is off. */
  tracer?: Tracer | undefined;
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

/** A target tried and how it failed, bounded, for the request's log record. */
function attemptOf(provider: string, model: string, error: GatewayError): TargetAttempt {
  return {
    provider,
    model,
    status: error.status,
    type: error.type,
    message: error.message.slice(0, MAX_ATTEMPT_MESSAGE),
  };
}

/** What each target answered, the last ones within the bound, for the request's log record (docs/logs.md). */
function attemptsOf(failures: Array<{ target: RouteTarget; error: GatewayError }>): TargetAttempt[] {
  return failures
    .slice(-MAX_TARGET_ATTEMPTS)
    .map(({ target, error }) => attemptOf(target.provider, target.model, error));
}

/** A piece relayed verbatim (in the caller's format or in gw's) is already an item; a plain chunk is wrapped. */
function streamItem(value: StreamPiece | NativePiece): StreamItem {
  return value instanceof NativePiece || value instanceof VerbatimChunk ? value : { chunk: value };
}

/** A stream's upstream iterator and the first thing it gave, as the retry loop got them. */
interface StreamStart {
  iterator: AsyncIterator<StreamPiece | NativePiece>;
  first: IteratorResult<StreamPiece | NativePiece>;
}

/** What a stream that has started reads: its upstream, its measure, and what served it. */
interface StartedStream {
  iterator: AsyncIterator<StreamPiece | NativePiece>;
  measure: StreamMeasure;
  provider: LoadedProvider;
  keyId: string | undefined;
  model: string;
  /** The model the first chunk named: a failure later in the stream is recorded against it. */
  firstModel: string;
  release: Release;
}

/** The target a failure's health is recorded against. */
type MeasuredTarget = { provider: string; key: string | undefined; model: string };

const STREAM_DONE: IteratorReturnResult<undefined> = { done: true, value: undefined };

/**
 * The iterator of PlanExecution.streamAcrossTargets: the first `next` runs the plan to a first chunk, the
 * later ones read the upstream's chunks as they come and measure them (StreamMeasure); a failure after the
 * first chunk is recorded against its target and ends the stream. The provider's concurrency place is freed
 * once the stream ends, however it ends.
 */
class PlanStream implements AsyncIterator<StreamItem> {
  private readonly start: () => Promise<Attempted<StreamStart>>;
  private readonly health: HealthBoard;
  private readonly recordFailure: (target: MeasuredTarget, failure: GatewayError) => void;
  private started: StartedStream | undefined;
  private finished = false;
  /** The `next` under way, which a `return` waits for (a reader may stop while the first chunk is awaited). */
  private running: Promise<unknown> | undefined;

  constructor(
    start: () => Promise<Attempted<StreamStart>>,
    health: HealthBoard,
    recordFailure: (target: MeasuredTarget, failure: GatewayError) => void,
  ) {
    this.start = start;
    this.health = health;
    this.recordFailure = recordFailure;
  }

  next(): Promise<IteratorResult<StreamItem>> {
    const step = this.finished
      ? Promise.resolve(STREAM_DONE)
      : this.started
        ? this.read(this.started)
        : this.first();
    this.running = step;
    return step;
  }

  async return(): Promise<IteratorResult<StreamItem>> {
    if (this.running) await this.running.catch(() => {});
    const started = this.started;
    if (this.finished || !started) {
      this.finished = true;
      return STREAM_DONE;
    }
    return this.finish(started);
  }

  /** Ends a started stream: its upstream closed, its provider's concurrency place freed. */
  private async finish(started: StartedStream): Promise<IteratorReturnResult<undefined>> {
    this.finished = true;
    try {
      await started.iterator.return?.();
    } finally {
      started.release();
    }
    return STREAM_DONE;
  }

  private async first(): Promise<IteratorResult<StreamItem>> {
    let attempted: Attempted<StreamStart>;
    try {
      attempted = await this.start();
    } catch (error) {
      this.finished = true;
      throw error;
    }
    const { value, provider, keyId, model, fallbackIndex, failedBefore, release, startedAt } = attempted;
    const measure = new StreamMeasure({
      health: this.health,
      target: { provider: provider.name, key: keyId, model },
      startedAt,
    });
    if (value.first.done) {
      this.finished = true;
      try {
        measure.end();
      } finally {
        release();
      }
      return STREAM_DONE;
    }
    const firstItem = streamItem(value.first.value);
    this.started = {
      iterator: value.iterator,
      measure,
      provider,
      keyId,
      model,
      firstModel: firstItem.chunk.model,
      release,
    };
    measure.see(firstItem.chunk);
    return {
      done: false,
      value: { ...firstItem, provider: provider.name, servedBy: { fallbackIndex, keyId, failedBefore } },
    };
  }

  private async read(started: StartedStream): Promise<IteratorResult<StreamItem>> {
    let next: IteratorResult<StreamPiece | NativePiece>;
    try {
      next = await started.iterator.next();
      if (!next.done) {
        const item = streamItem(next.value);
        started.measure.see(item.chunk);
        return { done: false, value: item };
      }
      started.measure.end();
    } catch (error) {
      this.finished = true;
      const { provider, keyId, model } = started;
      const failure = withoutSecrets(toGatewayError(error), provider);
      if (!isCancellation(failure))
        this.recordFailure({ provider: provider.name, key: keyId, model }, failure);
      const cut = failure.withTarget(provider.name, started.firstModel);
      await this.finish(started);
      // The target that served the start of the stream is the one whose failure the record lists.
      throw new GatewayError({
        ...cut.toJSON(),
        attempts: [attemptOf(provider.name, started.firstModel, cut)],
        cause: cut.cause,
      });
    }
    return this.finish(started);
  }
}

/**
 * Executes a routing plan: targets in order (the first, then fallbacks), each with
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
    /**
     * Keep the provider's concurrency place after the attempt (a stream holds it until it ends), and leave the
     * success to be counted by the stream (at its first content chunk, StreamMeasure).
     */
    hold?: boolean;
    /** The tokens an answer served (its usage), counted against its target. */
    tokens?: ((value: T) => number | undefined) | undefined;
    /** The parent of the attempts' spans (the router's request span). */
    trace?: TraceContext | undefined;
    /** Counts the upstream attempts made (whether a call that failed or was lost was ever sent upstream). */
    tally?: CallTally | undefined;
  }): Promise<Attempted<T>> {
    const { max_fallbacks: maxFallbacks, max_attempts: maxAttempts } = this.dependencies.limits.current();
    const fallbacks = options.targets.length - 1;
    if (fallbacks > maxFallbacks) {
      throw invalidRequest(
        `fallbacks: ${fallbacks} given, at most ${maxFallbacks} are allowed (client.max_fallbacks)`,
        'fallbacks',
      );
    }
    const budget = { attempts: maxAttempts, made: 0, tally: options.tally };
    const failures: Array<{ target: RouteTarget; error: GatewayError }> = [];
    // A Failed target goes behind the others (its probe excepted): traffic is rerouted to the fallbacks.
    const targets = this.dependencies.health.order(options.targets, targetIds);
    for (const [index, target] of targets.entries()) {
      if (budget.attempts === 0) break;
      try {
        const attempted = await this.withRetries(target, {
          ...options,
          budget,
          fallbackAfter: index < targets.length - 1,
        });
        if (index > 0) this.dependencies.metrics.fallbacks.inc({ provider: target.provider });
        const planned = options.targets.indexOf(target);
        return {
          ...attempted,
          fallbackIndex: planned === -1 ? index : planned,
          failedBefore: failures.length > 0 ? attemptsOf(failures) : undefined,
        };
      } catch (error) {
        const failure = toGatewayError(error);
        if (isCancellation(failure)) throw failure;
        failures.push({ target, error: failure.withTarget(target.provider, target.model) });
      }
    }
    const attempts = attemptsOf(failures);
    if (failures.length === 1) {
      const only = failures[0]!.error;
      throw new GatewayError({ ...only.toJSON(), attempts, cause: only.cause });
    }
    const last = failures[failures.length - 1]!.error;
    throw new GatewayError({
      attempts,
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
   * producing anything is retried and falls back like any call; a failure after it ends the stream. An
   * iterator of its own (PlanStream) rather than an async generator: every chunk passes through it, and a
   * generator's resumption and yield cost microtasks on each.
   */
  streamAcrossTargets<O extends 'chat_stream' | 'text_stream'>(options: {
    targets: RouteTarget[];
    signal: AbortSignal;
    operation: O;
    trace?: TraceContext | undefined;
    tally?: CallTally | undefined;
    open: (
      method: MethodOf<O>,
      target: RouteTarget,
      context: AdapterContext,
    ) => AsyncIterable<StreamPiece | NativePiece>;
  }): AsyncIterable<StreamItem> {
    const start = async (): Promise<Attempted<StreamStart>> =>
      this.acrossTargets({
        ...options,
        hold: true,
        attempt: async (method, target, context) => {
          const iterator = options.open(method, target, context)[Symbol.asyncIterator]();
          return { iterator, first: await iterator.next() };
        },
      });
    return {
      [Symbol.asyncIterator]: () =>
        new PlanStream(start, this.dependencies.health, (target, failure) =>
          this.recordFailure(target, failure),
        ),
    };
  }

  private async withRetries<O extends Operation, T>(
    target: RouteTarget,
    options: {
      signal: AbortSignal;
      operation: O;
      attempt: Attempt<O, T>;
      hold?: boolean | undefined;
      tokens?: ((value: T) => number | undefined) | undefined;
      trace?: TraceContext | undefined;
      /** Calls the request may still make, and has made (shared by its targets). */
      budget: { attempts: number; made: number; tally: CallTally | undefined };
      /** Another target of the plan comes after this one (a fallback that may serve). */
      fallbackAfter: boolean;
    },
  ): Promise<Attempted<T>> {
    const { http, metrics, random, health, gates, tracer } = this.dependencies;
    const { signal, operation } = options;
    const provider = this.dependencies.providers.resolve(target.provider);
    const method = adapterMethod(provider.adapter, provider.name, operation);
    const network = provider.config.network_config;
    const excluded = new Set<string>();
    for (let attempt = 0; ; attempt++) {
      const key = selectKey(
        provider.keys,
        { model: target.model, allowedIds: target.keyIds, excluded, affinity: target.affinity },
        { provider: provider.name, health, random },
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
        environment: this.dependencies.environment,
      };
      const admitted = await gates.acquire(provider.name, network, signal);
      // A caller that went away before the attempt (a lane cancelled while its call waited) costs no upstream
      // call, and the call's report says none was sent.
      if (signal.aborted) {
        admitted();
        throw requestCancelled();
      }
      const measured = { provider: provider.name, key: key?.id, model: target.model };
      // In flight from here to the release (a stream's end): the signal least-busy routing reads.
      const ended = health.begin(measured);
      const release: Release = () => {
        ended();
        admitted();
      };
      const startedAt = performance.now();
      options.budget.attempts--;
      options.budget.made++;
      if (options.budget.tally) options.budget.tally.attempts++;
      const span =
        tracer &&
        startAttemptSpan(tracer, {
          operation,
          ...measured,
          keyId: key?.id,
          number: options.budget.made,
          parent: options.trace,
        });
      if (span) context.trace = span.context;
      try {
        const value = await options.attempt(method, target, context);
        span?.end();
        const seconds = (performance.now() - startedAt) / 1000;
        metrics.upstreamDuration.observe({ provider: provider.name, operation }, seconds);
        if (!options.hold) {
          // A whole answer's first token arrives with it.
          const latencyMs = seconds * 1000;
          health.record(measured, {
            failure: false,
            latencyMs,
            ttftMs: latencyMs,
            tokens: options.tokens?.(value),
          });
          release();
        }
        return {
          value,
          provider,
          startedAt,
          keyId: key?.id,
          model: target.model,
          fallbackIndex: 0,
          release,
        };
      } catch (error) {
        release();
        const failure = withoutSecrets(toGatewayError(error), provider);
        if (span) endFailedAttempt(span, failure);
        if (isCancellation(failure)) throw failure;
        this.recordFailure(measured, failure);
        const rotatesKey = failure.upstream && [401, 403, 429].includes(failure.status);
        // A key's probe (it was Failed) that fails again costs the caller nothing: another key serves, and
        // the attempt does not count against `max_retries`.
        const failedProbe =
          key !== undefined &&
          isTransient(failure) &&
          health.stateOf(healthId.target(provider.name, key.id, target.model)) === 'failed';
        // A retry goes to another key where there is one: this one just failed.
        if (key && (rotatesKey || isTransient(failure))) excluded.add(key.id);
        const anotherKey =
          (rotatesKey || failedProbe) && provider.keys.some((candidate) => !excluded.has(candidate.id));
        if (failedProbe && anotherKey && options.budget.attempts > 0) {
          attempt--;
          continue;
        }
        // The target is out (this was its probe, or it was just ejected): no retry while a fallback may serve.
        // A plan's last target keeps its retries: out of the plan only while another target can serve
        // (docs/routing-health.md), it is then the request's only chance.
        if (
          options.fallbackAfter &&
          isTransient(failure) &&
          health.stateOf(healthId.model(provider.name, target.model)) === 'failed'
        ) {
          throw failure;
        }
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

  /** Counts a failed attempt in the error metrics, and against the target's health when it says something about it. */
  private recordFailure(measured: MeasuredTarget, failure: GatewayError) {
    const outcome = healthOutcome(failure);
    if (outcome) this.dependencies.health.record(measured, outcome);
    this.dependencies.metrics.upstreamErrors.inc({
      provider: measured.provider,
      type: failure.type,
      status: String(failure.status),
    });
  }
}

/**
 * A route target is judged by its provider's model (derived from every key serving it): out of the plan only
 * when no key of the provider can serve the model.
 */
function targetIds(target: RouteTarget): string[] {
  return [healthId.model(target.provider, target.model)];
}
