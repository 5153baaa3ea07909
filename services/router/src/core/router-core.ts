import {
  type ChatChoice,
  type ChatCompletionChunk,
  type CompletionResponse,
  type GatewayConfig,
  GatewayError,
  isTransient,
  type Logger,
  type Metrics,
  type Operation,
  type ProviderConfig,
  providerConfigSchema,
  providerNameSchema,
  type Store,
  type TextChoice,
  toGatewayError,
  unsupportedOperation,
} from '@gw/shared';
import { backoffMs, sleep } from './backoff.ts';
import { HealthTracker, type ProviderHealth } from './health.ts';
import { selectKey } from './key-selector.ts';
import { type PassthroughRequest, type PassthroughResponse, runPassthrough } from './passthrough.ts';
import {
  isBuiltInProvider,
  keepRedactedSecrets,
  type LoadedProvider,
  loadProvider,
  redactProvider,
  withKeyIds,
} from './provider-registry.ts';
import type {
  AdapterContext,
  AdapterResult,
  EmbeddingsResult,
  ProviderAdapter,
} from './providers/adapter.ts';
import type {
  CallOptions,
  CompleteResult,
  RouteRequest,
  RouterService,
  RouteTarget,
  StreamItem,
} from './router-service.ts';
import { isCancellation, UpstreamClient } from './upstream-client.ts';

const PROVIDERS_COLLECTION = 'providers';
export const PROVIDERS_CHANGED_CHANNEL = 'providers.changed';

export interface RouterCoreDependencies {
  store: Store;
  logger: Logger;
  metrics: Metrics;
  /** Providers of the config file, written to the store at start (the file wins for the names it lists). */
  seedProviders?: GatewayConfig['providers'];
  sendRawResponse?: boolean;
  http?: UpstreamClient;
  random?: () => number;
}

interface Attempted<T> {
  value: T;
  provider: LoadedProvider;
  startedAt: number;
}

/** The router core: provider configs, key selection, retries with backoff, fallbacks. Transport-free. */
export class RouterCore implements RouterService {
  private readonly providers = new Map<string, LoadedProvider>();
  private readonly healthTracker = new HealthTracker();
  private readonly http: UpstreamClient;
  private readonly sendRawResponse: boolean;
  private readonly dependencies: RouterCoreDependencies;
  private unsubscribe: (() => Promise<void>) | undefined;

  private constructor(dependencies: RouterCoreDependencies) {
    this.dependencies = dependencies;
    this.http = dependencies.http ?? new UpstreamClient();
    this.sendRawResponse = dependencies.sendRawResponse ?? true;
  }

  static async start(dependencies: RouterCoreDependencies): Promise<RouterCore> {
    const core = new RouterCore(dependencies);
    await core.seed();
    await core.reloadAll();
    core.unsubscribe = await dependencies.store.subscribe(PROVIDERS_CHANGED_CHANNEL, (name) => {
      core
        .reload(name)
        .catch((error) =>
          dependencies.logger.error({ err: error, provider: name }, 'provider reload failed'),
        );
    });
    return core;
  }

  async close(): Promise<void> {
    await this.unsubscribe?.();
    await this.http.close();
  }

  // --- completions -------------------------------------------------------------------------------------

  async complete(request: RouteRequest, options: CallOptions): Promise<CompleteResult> {
    if (request.operation === 'embeddings') return this.embeddings(request, options);
    const operation: Operation = request.operation === 'chat' ? 'chat' : 'text';
    const { value, provider, startedAt } = await this.acrossTargets<AdapterResult<ChatChoice | TextChoice>>(
      request,
      options.signal,
      operation,
      (adapter, input, context) =>
        request.operation === 'chat'
          ? adapter.chat!(
              { model: input.model, messages: request.messages ?? [], params: request.params },
              context,
            )
          : adapter.text!(
              { model: input.model, prompt: request.prompt ?? '', params: request.params },
              context,
            ),
    );
    const response = this.buildResponse(request, provider.name, value, startedAt);
    return {
      body: JSON.stringify(response),
      provider: provider.name,
      model: response.model,
      usage: response.usage,
    };
  }

  async *stream(request: RouteRequest, options: CallOptions): AsyncGenerator<StreamItem> {
    const operation: Operation = request.operation === 'chat' ? 'chat_stream' : 'text_stream';
    const { value, provider } = await this.acrossTargets(
      request,
      options.signal,
      operation,
      async (adapter, input, context) => {
        const chunks =
          request.operation === 'chat'
            ? adapter.chatStream!(
                { model: input.model, messages: request.messages ?? [], params: request.params },
                context,
              )
            : adapter.textStream!(
                { model: input.model, prompt: request.prompt ?? '', params: request.params },
                context,
              );
        const iterator = chunks[Symbol.asyncIterator]();
        // The first chunk is inside the retry loop: a stream that fails before producing anything is retried.
        const first = await iterator.next();
        return { iterator, first };
      },
    );
    const { iterator, first } = value;
    if (first.done) return;
    yield {
      chunk: JSON.stringify(first.value),
      provider: provider.name,
      model: first.value.model,
      ...usageOf(first.value),
    };
    try {
      while (true) {
        const next = await iterator.next();
        if (next.done) return;
        yield { chunk: JSON.stringify(next.value), ...usageOf(next.value) };
      }
    } catch (error) {
      const failure = toGatewayError(error);
      if (!isCancellation(failure)) this.recordFailure(provider.name, failure);
      throw failure.withTarget(provider.name, first.value.model);
    } finally {
      await iterator.return?.();
    }
  }

  /** Embeddings along the plan, answered as OpenAI's embeddings list (with gw's `extra_fields`). */
  private async embeddings(request: RouteRequest, options: CallOptions): Promise<CompleteResult> {
    const { value, provider, startedAt } = await this.acrossTargets<EmbeddingsResult>(
      request,
      options.signal,
      'embeddings',
      (adapter, input, context) =>
        adapter.embeddings!(
          { model: input.model, input: request.input ?? '', params: request.params },
          context,
        ),
    );
    const model = bareModel(value.model, provider.name);
    const extra: Record<string, unknown> = {
      provider: provider.name,
      model_params: request.params,
      latency: Math.round(performance.now() - startedAt) / 1000,
    };
    if (this.sendRawResponse) extra['raw_response'] = value.raw;
    const body = {
      object: 'list',
      data: value.data.map((item) => ({ object: 'embedding', index: item.index, embedding: item.embedding })),
      model,
      usage: { prompt_tokens: value.usage.prompt_tokens, total_tokens: value.usage.total_tokens },
      extra_fields: extra,
    };
    return { body: JSON.stringify(body), provider: provider.name, model, usage: value.usage };
  }

  async passthrough(
    request: PassthroughRequest,
    body: AsyncIterable<Uint8Array> | undefined,
    options: CallOptions,
  ): Promise<PassthroughResponse> {
    return runPassthrough({
      provider: this.resolve(request.target.provider),
      request,
      body,
      http: this.http,
      call: options,
      random: this.dependencies.random,
    });
  }

  /** Tries each target in order (fallbacks), each with retries; answers the first success. */
  private async acrossTargets<T>(
    request: RouteRequest,
    signal: AbortSignal,
    operation: Operation,
    run: (adapter: ProviderAdapter, target: RouteTarget, context: AdapterContext) => Promise<T>,
  ): Promise<Attempted<T>> {
    const failures: Array<{ target: RouteTarget; error: GatewayError }> = [];
    for (const [index, target] of request.targets.entries()) {
      try {
        const attempted = await this.withRetries(target, signal, operation, run);
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

  private async withRetries<T>(
    target: RouteTarget,
    signal: AbortSignal,
    operation: Operation,
    run: (adapter: ProviderAdapter, target: RouteTarget, context: AdapterContext) => Promise<T>,
  ): Promise<Attempted<T>> {
    const provider = this.resolve(target.provider);
    if (!provider.adapter.capabilities.operations.includes(operation)) {
      throw unsupportedOperation(provider.name, operation);
    }
    const network = provider.config.network_config;
    const excluded = new Set<string>();
    for (let attempt = 0; ; attempt++) {
      const key = selectKey(
        provider.keys,
        { model: target.model, allowedIds: target.keyIds, excluded },
        this.dependencies.random,
      );
      if (!key && !provider.adapter.capabilities.authOptional) {
        throw new GatewayError({
          type: 'provider_not_configured',
          status: 400,
          message: `provider '${provider.name}' has no key that may serve model '${target.model}'`,
          provider: provider.name,
          model: target.model,
        });
      }
      const context: AdapterContext = {
        provider: provider.name,
        http: this.http,
        baseUrl: provider.baseUrl,
        key,
        network,
        timeoutMs: network.model_timeouts_ms[target.model] ?? network.timeout_ms,
        signal,
      };
      const startedAt = performance.now();
      try {
        const value = await run(provider.adapter, target, context);
        this.dependencies.metrics.upstreamDuration.observe(
          { provider: provider.name, operation },
          (performance.now() - startedAt) / 1000,
        );
        this.healthTracker.record(provider.name, true);
        return { value, provider, startedAt };
      } catch (error) {
        const failure = toGatewayError(error);
        if (isCancellation(failure)) throw failure;
        this.recordFailure(provider.name, failure);
        const rotatesKey = failure.upstream && [401, 403, 429].includes(failure.status);
        if (key && rotatesKey) excluded.add(key.id);
        const anotherKey = rotatesKey && provider.keys.some((candidate) => !excluded.has(candidate.id));
        const retryable =
          isTransient(failure) || (anotherKey && (failure.status === 401 || failure.status === 403));
        if (!retryable || attempt >= network.max_retries) throw failure;
        this.dependencies.metrics.retries.inc({ provider: provider.name });
        await sleep(
          backoffMs({
            attempt,
            initialMs: network.retry_backoff_initial_ms,
            maxMs: network.retry_backoff_max_ms,
            retryAfterSeconds: anotherKey ? undefined : failure.retryAfter,
          }),
          signal,
        ).catch(() => {
          throw new GatewayError({
            type: 'internal_error',
            status: 499,
            message: 'request cancelled by the caller',
          });
        });
      }
    }
  }

  private recordFailure(provider: string, failure: GatewayError): void {
    this.healthTracker.record(provider, false);
    this.dependencies.metrics.upstreamErrors.inc({
      provider,
      type: failure.type,
      status: String(failure.status),
    });
  }

  private buildResponse(
    request: RouteRequest,
    provider: string,
    result: AdapterResult<ChatChoice | TextChoice>,
    startedAt: number,
  ): CompletionResponse {
    const choices =
      request.operation === 'chat'
        ? result.choices
        : (result.choices as TextChoice[]).map((choice) => ({
            ...choice,
            message: { role: 'assistant' as const, content: choice.text },
          }));
    const response: CompletionResponse = {
      id: result.id || `gw-${request.requestId}`,
      object: request.operation === 'chat' ? 'chat.completion' : 'text.completion',
      choices,
      model: bareModel(result.model, provider),
      created: result.created,
      usage: result.usage,
      extra_fields: {
        provider,
        model_params: request.params,
        latency: Math.round(performance.now() - startedAt) / 1000,
      },
    };
    if (result.systemFingerprint) response.system_fingerprint = result.systemFingerprint;
    if (this.sendRawResponse) response.extra_fields.raw_response = result.raw;
    return response;
  }

  // --- provider configuration --------------------------------------------------------------------------

  private resolve(name: string): LoadedProvider {
    const provider = this.providers.get(name);
    if (provider) return provider;
    if (isBuiltInProvider(name)) {
      throw new GatewayError({
        type: 'provider_not_configured',
        status: 400,
        message: `provider '${name}' is not configured`,
        provider: name,
      });
    }
    throw new GatewayError({
      type: 'unknown_provider',
      status: 400,
      message: `unknown provider '${name}'`,
      provider: name,
    });
  }

  private async seed(): Promise<void> {
    for (const [name, config] of Object.entries(this.dependencies.seedProviders ?? {})) {
      loadProvider(name, config);
      await this.dependencies.store.put(PROVIDERS_COLLECTION, name, withKeyIds(name, config));
    }
  }

  private async reloadAll(): Promise<void> {
    for (const { id } of await this.dependencies.store.list(PROVIDERS_COLLECTION)) await this.reload(id);
  }

  /** Re-reads one provider from the store (hot reload on every replica). */
  private async reload(name: string): Promise<void> {
    const stored = await this.dependencies.store.get(PROVIDERS_COLLECTION, name);
    if (stored === undefined) {
      this.providers.delete(name);
      return;
    }
    try {
      this.providers.set(name, loadProvider(name, stored));
    } catch (error) {
      this.dependencies.logger.error(
        { err: error, provider: name },
        'stored provider config is invalid; keeping the previous one',
      );
    }
  }

  private async storedConfig(name: string): Promise<ProviderConfig | undefined> {
    const stored = await this.dependencies.store.get(PROVIDERS_COLLECTION, name);
    if (stored === undefined) return undefined;
    const parsed = providerConfigSchema.safeParse(stored);
    return parsed.success ? parsed.data : undefined;
  }

  async listProviders(): Promise<Array<Record<string, unknown>>> {
    const stored = await this.dependencies.store.list(PROVIDERS_COLLECTION);
    return stored
      .flatMap(({ id, value }) => {
        const parsed = providerConfigSchema.safeParse(value);
        return parsed.success ? [redactProvider(id, parsed.data)] : [];
      })
      .sort((left, right) => String(left['name']).localeCompare(String(right['name'])));
  }

  async getProvider(name: string): Promise<Record<string, unknown>> {
    const config = await this.storedConfig(name);
    if (!config) throw notFound(name);
    return redactProvider(name, config);
  }

  async putProvider(
    name: string,
    input: unknown,
    options: { create: boolean },
  ): Promise<Record<string, unknown>> {
    const validName = providerNameSchema.safeParse(name);
    if (!validName.success) {
      throw new GatewayError({
        type: 'invalid_request',
        status: 400,
        message: `name: '${name.slice(0, 80)}' ${validName.error.issues[0]?.message ?? 'is not a valid provider name'}`,
        param: 'name',
      });
    }
    const stored = await this.storedConfig(name);
    if (options.create && stored) {
      throw new GatewayError({
        type: 'invalid_request',
        status: 409,
        message: `provider '${name}' already exists`,
      });
    }
    if (!options.create && !stored) throw notFound(name);
    const loaded = loadProvider(name, input);
    const config = keepRedactedSecrets(loaded.config, stored);
    const final = loadProvider(name, config);
    await this.dependencies.store.put(PROVIDERS_COLLECTION, name, final.config);
    this.providers.set(name, final);
    await this.dependencies.store.publish(PROVIDERS_CHANGED_CHANNEL, name);
    return redactProvider(name, final.config);
  }

  async deleteProvider(name: string): Promise<void> {
    if (!(await this.dependencies.store.delete(PROVIDERS_COLLECTION, name))) throw notFound(name);
    this.providers.delete(name);
    await this.dependencies.store.publish(PROVIDERS_CHANGED_CHANNEL, name);
  }

  async health(): Promise<ProviderHealth[]> {
    return this.healthTracker.snapshot();
  }
}

function notFound(name: string): GatewayError {
  return new GatewayError({ type: 'not_found', status: 404, message: `provider '${name}' does not exist` });
}

function usageOf(chunk: ChatCompletionChunk): { usage?: NonNullable<ChatCompletionChunk['usage']> } {
  return chunk.usage ? { usage: chunk.usage } : {};
}

/** Models are answered without the provider prefix (SPEC.md Versioning 3). */
function bareModel(model: string, provider: string): string {
  return model.startsWith(`${provider}/`) ? model.slice(provider.length + 1) : model;
}
