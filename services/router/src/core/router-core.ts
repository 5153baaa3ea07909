import { type GatewayConfig, invalidRequest, type Logger, type Metrics } from '@gw/shared';
import type { Store } from '@gw/shared/store';
import { HealthTracker, type ProviderHealth } from './health.ts';
import { type PassthroughRequest, type PassthroughResponse, runPassthrough } from './passthrough.ts';
import { DEFAULT_PLAN_LIMITS, PlanExecution, type PlanLimits } from './plan-execution.ts';
import { ProviderConfigs } from './provider-configs.ts';
import type { ProviderAdapter } from './providers/adapter.ts';
import { buildCompletionResponse, buildEmbeddingsList, withChatMessages } from './response-building.ts';
import type {
  CallOptions,
  ChatRoute,
  CompletionResult,
  CompletionRoute,
  EmbeddingsResult,
  EmbeddingsRoute,
  RouterService,
  RouteTarget,
  StreamItem,
} from './router-service.ts';
import { UpstreamClient } from './upstream-client.ts';

/** An adapter that takes a format verbatim (router-service.ts NativeRequest). */
type NativeAdapter = Required<Pick<ProviderAdapter, 'nativeChat' | 'nativeChatStream'>>;

export interface RouterCoreDependencies {
  store: Store;
  logger: Logger;
  metrics: Metrics;
  /** Where `env.NAME` references of provider keys resolve: the process's environment, injected by main. */
  environment: NodeJS.ProcessEnv;
  /** Providers of the config file, written to the store at start (the file wins for the names it lists). */
  seedProviders?: GatewayConfig['providers'];
  sendRawResponse?: boolean;
  /** client.max_fallbacks and client.max_attempts (their defaults when not given). */
  limits?: PlanLimits;
  http?: UpstreamClient;
  random?: () => number;
}

/**
 * The router core (transport-free): completions, streams and embeddings executed along a plan
 * (plan-execution.ts), answers built as SPEC.md's shapes (response-building.ts), provider configs with hot
 * reload (provider-configs.ts), and the pass-through family (passthrough.ts).
 */
export class RouterCore implements RouterService {
  private readonly sendRawResponse: boolean;
  private readonly providers: ProviderConfigs;
  private readonly http: UpstreamClient;
  private readonly healthTracker: HealthTracker;
  private readonly plans: PlanExecution;

  private readonly dependencies: RouterCoreDependencies;

  private constructor(dependencies: RouterCoreDependencies, providers: ProviderConfigs) {
    this.dependencies = dependencies;
    this.sendRawResponse = dependencies.sendRawResponse ?? true;
    this.providers = providers;
    this.http = dependencies.http ?? new UpstreamClient();
    this.healthTracker = new HealthTracker();
    this.plans = new PlanExecution({
      providers,
      http: this.http,
      metrics: dependencies.metrics,
      health: this.healthTracker,
      random: dependencies.random,
      limits: dependencies.limits ?? DEFAULT_PLAN_LIMITS,
    });
  }

  static async start(dependencies: RouterCoreDependencies): Promise<RouterCore> {
    const providers = await ProviderConfigs.start({
      store: dependencies.store,
      logger: dependencies.logger,
      environment: dependencies.environment,
      seed: dependencies.seedProviders,
    });
    return new RouterCore(dependencies, providers);
  }

  async close(): Promise<void> {
    await this.providers.close();
    await this.http.close();
  }

  /**
   * How a target serves a chat route: the caller's native request to a provider that takes its format
   * verbatim, else the translation (refused with a 400 when the native request holds what it cannot carry).
   */
  private nativeAdapter(request: ChatRoute, target: RouteTarget): NativeAdapter | undefined {
    const { native } = request;
    if (!native) return undefined;
    const { adapter } = this.providers.resolve(target.provider);
    if (
      adapter.nativeFormat?.(target.model) === native.format &&
      adapter.nativeChat &&
      adapter.nativeChatStream
    ) {
      return adapter as NativeAdapter;
    }
    if (native.untranslatable) {
      throw invalidRequest(
        `${native.untranslatable.message}; provider '${target.provider}' cannot take it`,
        native.untranslatable.param,
      );
    }
    return undefined;
  }

  async complete(request: CompletionRoute, options: CallOptions): Promise<CompletionResult> {
    const common = { targets: request.targets, signal: options.signal };
    let native = false;
    const { value, provider, startedAt } =
      request.operation === 'chat'
        ? await this.plans.acrossTargets({
            ...common,
            operation: 'chat',
            attempt: (chat, target, context) => {
              const adapter = this.nativeAdapter(request, target);
              native = adapter !== undefined;
              return adapter
                ? adapter.nativeChat({ model: target.model, native: request.native! }, context)
                : chat({ model: target.model, messages: request.messages, params: request.params }, context);
            },
          })
        : await this.plans.acrossTargets({
            ...common,
            operation: 'text',
            attempt: async (text, target, context) =>
              withChatMessages(
                await text({ model: target.model, prompt: request.prompt, params: request.params }, context),
              ),
          });
    const response = buildCompletionResponse({
      request,
      provider: provider.name,
      result: value,
      startedAt,
      sendRawResponse: this.sendRawResponse,
    });
    return native
      ? { response, provider: provider.name, native: value.raw }
      : { response, provider: provider.name };
  }

  stream(request: CompletionRoute, options: CallOptions): AsyncGenerator<StreamItem> {
    const common = { targets: request.targets, signal: options.signal };
    return request.operation === 'chat'
      ? this.plans.streamAcrossTargets({
          ...common,
          operation: 'chat_stream',
          open: (chatStream, target, context) => {
            const adapter = this.nativeAdapter(request, target);
            return adapter
              ? adapter.nativeChatStream({ model: target.model, native: request.native! }, context)
              : chatStream(
                  { model: target.model, messages: request.messages, params: request.params },
                  context,
                );
          },
        })
      : this.plans.streamAcrossTargets({
          ...common,
          operation: 'text_stream',
          open: (textStream, target, context) =>
            textStream({ model: target.model, prompt: request.prompt, params: request.params }, context),
        });
  }

  async embed(request: EmbeddingsRoute, options: CallOptions): Promise<EmbeddingsResult> {
    const { value, provider, startedAt } = await this.plans.acrossTargets({
      targets: request.targets,
      signal: options.signal,
      operation: 'embeddings',
      attempt: (embeddings, target, context) =>
        embeddings({ model: target.model, input: request.input, params: request.params }, context),
    });
    const response = buildEmbeddingsList({
      request,
      provider: provider.name,
      result: value,
      startedAt,
      sendRawResponse: this.sendRawResponse,
    });
    return { response, provider: provider.name };
  }

  async passthrough(
    request: PassthroughRequest,
    body: AsyncIterable<Uint8Array> | undefined,
    options: CallOptions,
  ): Promise<PassthroughResponse> {
    return runPassthrough({
      provider: this.providers.resolve(request.target.provider),
      request,
      body,
      http: this.http,
      call: options,
      random: this.dependencies.random,
    });
  }

  listProviders(): Promise<Array<Record<string, unknown>>> {
    return this.providers.list();
  }

  getProvider(name: string): Promise<Record<string, unknown>> {
    return this.providers.get(name);
  }

  putProvider(name: string, config: unknown, options: { create: boolean }): Promise<Record<string, unknown>> {
    return this.providers.put(name, config, options);
  }

  deleteProvider(name: string): Promise<void> {
    return this.providers.delete(name);
  }

  async health(): Promise<ProviderHealth[]> {
    return this.healthTracker.snapshot();
  }
}
