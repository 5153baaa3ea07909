// `@gw/shared`: schemas, errors, config, logging and metrics. Servers, gRPC and stores have their own entry
// points (`@gw/shared/server`, `@gw/shared/grpc`, `@gw/shared/store`), so importing a schema opens nothing.

export * from './config/alerts-config.ts';
export * from './config/auth-config.ts';
export * from './config/cache-config.ts';
export * from './config/config-watch.ts';
export * from './config/env-reference.ts';
export * from './config/environment.ts';
export * from './config/exposure.ts';
export * from './config/gateway-config.ts';
export * from './config/logs-config.ts';
export * from './config/secret-reference.ts';
export * from './config/system-settings.ts';
export * from './config/tracing-config.ts';
export * from './config/vault-config.ts';
export * from './errors/gateway-error.ts';
export * from './errors/http.ts';
export * from './errors/unanswered-call.ts';
export * from './http/bearer.ts';
export * from './http/body.ts';
export * from './http/request-target.ts';
export * from './ids.ts';
export * from './logger.ts';
export * from './merge-patch.ts';
export * from './metrics.ts';
export * from './redaction.ts';
export * from './schemas/chat.ts';
export * from './schemas/completion.ts';
export * from './schemas/governance.ts';
export * from './schemas/guardrails.ts';
export * from './schemas/mcp.ts';
export * from './schemas/passthrough.ts';
export * from './schemas/providers.ts';
export * from './sse.ts';
