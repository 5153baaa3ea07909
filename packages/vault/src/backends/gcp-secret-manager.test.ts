import { runSecretBackendContract, startFakeGcpSecretManager } from '@gw/testkit';

runSecretBackendContract({
  name: 'Google Secret Manager',
  start: () => startFakeGcpSecretManager(),
  // The fake's token stands for application default credentials (no metadata server here).
  resolverExtras: (fake) => ({
    googleTokenSource: async () => (fake as { accessToken?: string }).accessToken ?? '',
  }),
});
