import {
  type ClientConfig,
  type GatewayConfig,
  invalidRequest,
  type Live,
  type Logger,
  type Metrics,
  type OutboundPolicy,
  type SecretLookup,
  type SecretReferenceRule,
} from '@gw/shared';
import { HealthBoard, type LoadBalancerConfig, type ProviderHealthReport } from '@gw/shared/health';
import type { Store } from '@gw/shared/store';
import type { Tracer } from '@gw/shared/tracing';
import { CallReports, type CallTally } from './call-reports.ts';
import { runPassthrough } from './passthrough.ts';
import { PlanExecution } from './plan-execution.ts';
import { ProviderConfigs } from './provider-configs.ts';
import { ProviderGates } from './provider-gate.ts';
import type { ProviderAdapter } from './providers/adapter.ts';
import { buildCompletionResponse, buildEmbeddingsList, withChatMessages } from './response-building.ts';
import type {
  CallOptions,
  ChatRoute,
  CompletionResult,
  CompletionRoute,
  EmbeddingsResult,
  EmbeddingsRoute,
  PassthroughRequest,
  PassthroughResponse,
  ProviderWriteOptions,
  RouterService,
  RouteTarget,
  StreamItem,
} from './router-service.ts';
import { UpstreamClient } from './upstream-client.ts';

/** The tokens an answer served, as its usage counts them (the health board's tokens per minute). */
const usageTokens = (result: { usage: { total_tokens: number } }) => result.usage.total_tokens;

/** An adapter that takes a format verbatim (router-service.ts NativeRequest). */
type NativeAdapter = Required<Pick<ProviderAdapter, 'nativeChat' | 'nativeChatStream'>>;

/** The client settings a router reads at each request. */
export type RouterClientSettings = Pick<ClientConfig, 'send_raw_response' | 'max_fallbacks' | 'max_attempts'>;

export interface RouterCoreDependencies {
  store: Store;
  logger: Logger;
  metrics: Metrics;
  /** Where `env.NAME` references of provider keys resolve: the process's environment, injected by main. */
  environment: NodeJS.ProcessEnv;
  /** Where secret-manager references of provider keys resolve (docs/vault.md): the process's resolver. */
  secrets?: SecretLookup | undefined;
  /** Providers of the config file, written to the store at start (the file wins for the names it lists). */
  seedProviders?: GatewayConfig['providers'];
  /**
   * The client settings the router follows (`PUT /api/config` changes them for the next request): whether
   * answers carry the provider's body (`send_raw_response`) and how many fallbacks and upstream calls one
   * request may cause.
   */
  client: Live<RouterClientSettings>;
  http?: UpstreamClient;
  /** The config file's outbound address policy (docs/network.md): every upstream connection passes it. */
  outbound: OutboundPolicy;
  /** The config file's `admin.secret_references`: the references Admin may name in a provider's credentials. */
  secretReferences: SecretReferenceRule;
  random?: () => number;
  /**
   * Health: a board shared with governance (embedded mode), or, when absent, one of the router's own that
   * shares its window with the other replicas through the store (cluster mode).
   */
  health?: HealthBoard | undefined;
  /** The config file's `load_balancer` (the admin API's document replaces it). */
  loadBalancer?: Live<LoadBalancerConfig> | undefined;
  /** Names this replica's window in the store (cluster mode). */
  replicaId?: string | undefined;
  /** A span per upstream attempt, child of the call's `trace` (docs/tracing.md); none when tracing is off. */
  tracer?: Tracer | undefined;
  /**
   * Report each routed call to the store (`CallReports`) for the settle of a call its ingress lost: true by
   * default (a cluster). The embedded gateway says false: its ingress calls it in the same process and cannot
   * lose a call, and its reports (a store write per request) would never be read.
   */
  reportCalls?: boolean | undefined;
}

/**
 * The router core (transport-free): completions, streams and embeddings executed along a plan
 * (plan-execution.ts), answers built in gw's shapes (response-building.ts), provider configs with hot
 * reload (provider-configs.ts), and the pass-through family (passthrough.ts).
 */
export class RouterCore implements RouterService {
  private readonly providers: ProviderConfigs;
  private readonly http: UpstreamClient;
  private readonly plans: PlanExecution;
  private readonly healthBoard: HealthBoard;
  /** What each routed call served, for the settle of a call its ingress lost (call-reports.ts). */
  private readonly reports: CallReports;
  /** The board this core made (and closes); an injected one belongs to its maker. */
  private readonly ownsHealth: boolean;

  private readonly dependencies: RouterCoreDependencies;

  private constructor(
    dependencies: RouterCoreDependencies,
    parts: { providers: ProviderConfigs; health: HealthBoard },
  ) {
    this.dependencies = dependencies;
    this.providers = parts.providers;
    this.http = dependencies.http ?? new UpstreamClient({ outbound: dependencies.outbound });
    this.healthBoard = parts.health;
    this.reports = new CallReports({
      store: dependencies.reportCalls === false ? undefined : dependencies.store,
      logger: dependencies.logger,
    });
    this.ownsHealth = dependencies.health === undefined;
    const health = parts.health;
    health.publishLimits(() => parts.providers.keyLimits());
    this.plans = new PlanExecution({
      providers: parts.providers,
      http: this.http,
      metrics: dependencies.metrics,
      environment: dependencies.environment,
      health,
      gates: new ProviderGates({
        metrics: dependencies.metrics,
        onLoad: (provider, inflight, capacity) => health.setLoad(provider, inflight, capacity),
      }),
      random: dependencies.random,
      limits: dependencies.client,
      tracer: dependencies.tracer,
    });
  }

  static async start(dependencies: RouterCoreDependencies): Promise<RouterCore> {
    const providers = await ProviderConfigs.start({
      store: dependencies.store,
      logger: dependencies.logger,
      environment: dependencies.environment,
      secrets: dependencies.secrets,
      seed: dependencies.seedProviders,
      outbound: dependencies.outbound,
      secretReferences: dependencies.secretReferences,
    });
    const health =
      dependencies.health ??
      (await new HealthBoard({
        config: dependencies.loadBalancer,
        store: dependencies.store,
        share: { replicaId: dependencies.replicaId ?? 'router', publish: true },
        logger: dependencies.logger,
        metrics: dependencies.metrics,
      }).start());
    return new RouterCore(dependencies, { providers, health });
  }

  /** Closes it as a resource of a composition root (its AsyncDisposableStack). */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  async close(): Promise<void> {
    if (this.ownsHealth) await this.healthBoard.close();
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

  complete(request: CompletionRoute, options: CallOptions): Promise<CompletionResult> {
    return this.reports.whole(
      { requestId: request.requestId, signal: options.signal },
      (tally) => this.completeCall(request, options, tally),
      (result) => ({ provider: result.provider, model: result.response.model, usage: result.response.usage }),
    );
  }

  private async completeCall(
    request: CompletionRoute,
    options: CallOptions,
    tally: CallTally,
  ): Promise<CompletionResult> {
    const common = { targets: request.targets, signal: options.signal, trace: options.trace, tally };
    let native = false;
    const { value, provider, startedAt, fallbackIndex, keyId, failedBefore } =
      request.operation === 'chat'
        ? await this.plans.acrossTargets({
            ...common,
            operation: 'chat',
            tokens: usageTokens,
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
            tokens: usageTokens,
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
      sendRawResponse: this.dependencies.client.current().send_raw_response,
    });
    const servedBy = { fallbackIndex, keyId, failedBefore };
    return native
      ? { response, provider: provider.name, servedBy, native: value.raw }
      : { response, provider: provider.name, servedBy };
  }

  stream(request: CompletionRoute, options: CallOptions): AsyncIterable<StreamItem> {
    return this.reports.stream({ requestId: request.requestId, signal: options.signal }, (tally) =>
      this.streamCall(request, options, tally),
    );
  }

  private streamCall(
    request: CompletionRoute,
    options: CallOptions,
    tally: CallTally,
  ): AsyncIterable<StreamItem> {
    const common = { targets: request.targets, signal: options.signal, trace: options.trace, tally };
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

  embed(request: EmbeddingsRoute, options: CallOptions): Promise<EmbeddingsResult> {
    return this.reports.whole(
      { requestId: request.requestId, signal: options.signal },
      (tally) => this.embedCall(request, options, tally),
      // An embedding's answer is all prompt: the settle of a whole one charges it so (settle-stage.ts).
      (result) => ({
        provider: result.provider,
        model: result.response.model,
        usage: {
          prompt_tokens: result.response.usage.prompt_tokens,
          completion_tokens: 0,
          total_tokens: result.response.usage.total_tokens,
        },
      }),
    );
  }

  private async embedCall(
    request: EmbeddingsRoute,
    options: CallOptions,
    tally: CallTally,
  ): Promise<EmbeddingsResult> {
    const { value, provider, startedAt, fallbackIndex, keyId, failedBefore } = await this.plans.acrossTargets(
      {
        targets: request.targets,
        signal: options.signal,
        trace: options.trace,
        tally,
        operation: 'embeddings',
        tokens: usageTokens,
        attempt: (embeddings, target, context) =>
          embeddings({ model: target.model, input: request.input, params: request.params }, context),
      },
    );
    const response = buildEmbeddingsList({
      request,
      provider: provider.name,
      result: value,
      startedAt,
      sendRawResponse: this.dependencies.client.current().send_raw_response,
    });
    return { response, provider: provider.name, servedBy: { fallbackIndex, keyId, failedBefore } };
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
      health: this.healthBoard,
      random: this.dependencies.random,
    });
  }

  listProviders(): Promise<Array<Record<string, unknown>>> {
    return this.providers.list();
  }

  getProvider(name: string): Promise<Record<string, unknown>> {
    return this.providers.get(name);
  }

  putProvider(
    name: string,
    config: unknown,
    options: ProviderWriteOptions & { create: boolean },
  ): Promise<Record<string, unknown>> {
    return this.providers.put(name, config, options);
  }

  patchProvider(
    name: string,
    patch: Record<string, unknown>,
    options: ProviderWriteOptions = {},
  ): Promise<Record<string, unknown>> {
    return this.providers.patch(name, patch, options);
  }

  deleteProvider(name: string): Promise<void> {
    return this.providers.delete(name);
  }

  async health(): Promise<ProviderHealthReport[]> {
    return this.healthBoard.snapshot();
  }
}
