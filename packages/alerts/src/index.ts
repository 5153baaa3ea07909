export { AlertDispatcher } from './alert-dispatcher.ts';
export { localLease } from './alert-lease.ts';
export { AlertRegistry } from './alert-registry.ts';
export {
  type AlertChannel,
  type AlertRule,
  alertChannelSchema,
  alertRuleSchema,
} from './alert-schemas.ts';
export { governanceBudgetSource } from './alert-sources.ts';
export { outboundChannelUrls } from './channels/send-to-channel.ts';
export { startAlerts } from './start-alerts.ts';
