export * from './health-board.ts';
export { type HealthTarget, healthId } from './health-id.ts';
export * from './health-report.ts';
export type { ProviderKeyLimits, TargetSignals } from './health-signals.ts';
export * from './health-state.ts';
export type { Outcome } from './health-window.ts';
export * from './load-balancer-config.ts';
