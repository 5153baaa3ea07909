// `@gw/shared/tracing`: gw's tracing interface, GenAI attribute helpers and `startTracing`. Importing it loads
// no OpenTelemetry module; `startTracing` imports the SDK only when tracing is enabled.
export * from './gen-ai-attributes.ts';
export * from './start-tracing.ts';
export * from './tracer.ts';
