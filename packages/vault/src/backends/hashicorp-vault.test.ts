import { runSecretBackendContract, startFakeHashicorpVault } from '@gw/testkit';

runSecretBackendContract({
  name: 'HashiCorp Vault KV v2 (token auth)',
  start: () => startFakeHashicorpVault(),
});
