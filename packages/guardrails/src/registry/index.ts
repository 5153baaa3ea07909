// `@gw/guardrails/registry`: guardrails in the state store (admin writes, every ingress follows).
export { GuardrailRegistry } from './guardrail-registry.ts';
export { GuardrailRuntime } from './guardrail-runtime.ts';
