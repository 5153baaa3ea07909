import { runSecretBackendContract, startFakeAwsSecretsManager } from '@gw/testkit';
import { beforeAll } from 'vitest';

// The SDK's credential chain, as in production: here from the environment (no metadata service to ask).
beforeAll(() => {
  process.env['AWS_ACCESS_KEY_ID'] = 'AKIAVAULTCONTRACT000';
  process.env['AWS_SECRET_ACCESS_KEY'] = 'vault-contract-secret-access-key';
  process.env['AWS_EC2_METADATA_DISABLED'] = 'true';
});

runSecretBackendContract({ name: 'AWS Secrets Manager', start: () => startFakeAwsSecretsManager() });
