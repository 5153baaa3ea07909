import { runSecretBackendContract, startFakeAzureKeyVault } from '@gw/testkit';

runSecretBackendContract({
  name: 'Azure Key Vault (client credentials)',
  start: () => startFakeAzureKeyVault(),
});
