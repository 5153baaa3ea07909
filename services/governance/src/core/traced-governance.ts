import { ATTRIBUTES, providerAttributes, type Tracer, traced } from '@gw/shared/tracing';
import type { ManageResults } from './governance-messages.ts';
import type {
  AuthorizeRequest,
  AuthorizeResult,
  GovernanceCallOptions,
  GovernanceService,
  ManageRequest,
  SettleRequest,
  SettleResult,
} from './governance-service.ts';

/**
 * Governance with a span per authorize and settle (docs/tracing.md), children of the caller's context: the
 * request id, the kind of call, the virtual key's id (never its value), and a denial's error type. Management
 * calls are not traced. Wraps the core in both modes (in-process, and behind the gRPC server).
 */
export class TracedGovernance implements GovernanceService {
  private readonly core: GovernanceService & { close(): Promise<void> };
  private readonly tracer: Tracer;

  constructor(core: GovernanceService & { close(): Promise<void> }, tracer: Tracer) {
    this.core = core;
    this.tracer = tracer;
  }

  authorize(request: AuthorizeRequest, options?: GovernanceCallOptions): Promise<AuthorizeResult> {
    const span = this.tracer.startSpan('gw.governance.authorize', {
      parent: options?.trace,
      attributes: () => ({
        [ATTRIBUTES.requestId]: request.requestId,
        [ATTRIBUTES.authorizeKind]: request.kind,
      }),
    });
    return traced(
      span,
      () => this.core.authorize(request, options),
      (result) => ({ [ATTRIBUTES.virtualKeyId]: result.virtualKeyId }),
    );
  }

  settle(request: SettleRequest, options?: GovernanceCallOptions): Promise<SettleResult> {
    const span = this.tracer.startSpan('gw.governance.settle', {
      parent: options?.trace,
      attributes: () => ({
        [ATTRIBUTES.requestId]: request.requestId,
        [ATTRIBUTES.virtualKeyId]: request.settlement.virtualKeyId,
        [ATTRIBUTES.requestModel]: request.model,
        [ATTRIBUTES.inputTokens]: request.usage.prompt_tokens,
        [ATTRIBUTES.outputTokens]: request.usage.completion_tokens,
        ...(request.provider && providerAttributes(request.provider)),
      }),
    });
    return traced(span, () => this.core.settle(request, options));
  }

  manage<Request extends ManageRequest>(request: Request): Promise<ManageResults[Request['action']]> {
    return this.core.manage(request);
  }

  close(): Promise<void> {
    return this.core.close();
  }
}
