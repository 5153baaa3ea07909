import { ATTRIBUTES, providerAttributes, type Tracer, traced } from '@gw/shared/tracing';
import type { ManageResults } from './governance-messages.ts';
import type {
  Admission,
  AuthorizeRequest,
  AuthorizeResult,
  GovernanceCallOptions,
  GovernanceService,
  ManageRequest,
  SettleRequest,
  SettleResult,
} from './governance-service.ts';

/**
 * Admission with a span per authorize and settle (docs/tracing.md), children of the caller's context: the
 * request id, the kind of call, the virtual key's id (never its value), and a denial's error type. Wraps
 * admission wherever it runs (in-process, behind the gRPC server, in a cluster's ingress).
 */
export class TracedAdmission implements Admission {
  private readonly admission: Admission;
  private readonly tracer: Tracer;

  constructor(admission: Admission, tracer: Tracer) {
    this.admission = admission;
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
      () => this.admission.authorize(request, options),
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
    return traced(span, () => this.admission.settle(request, options));
  }
}

/** Governance with its admission traced (TracedAdmission); management calls are not traced. */
export class TracedGovernance extends TracedAdmission implements GovernanceService {
  private readonly core: GovernanceService;

  constructor(core: GovernanceService, tracer: Tracer) {
    super(core, tracer);
    this.core = core;
  }

  manage<Request extends ManageRequest>(request: Request): Promise<ManageResults[Request['action']]> {
    return this.core.manage(request);
  }
}
