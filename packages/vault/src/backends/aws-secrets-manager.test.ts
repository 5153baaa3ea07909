import { runSecretBackendContract, startFakeAwsSecretsManager } from '@gw/testkit';
import { afterAll, beforeAll, vi } from 'vitest';

// The SDK's credential chain, as in production: here from the environment (no metadata service to ask). Stubbed
// and restored: the unit tests share their worker process, and the next file must not find these credentials.
beforeAll(() => {
  vi.stubEnv('AWS_ACCESS_KEY_ID', 'AKIAVAULTCONTRACT000');
  vi.stubEnv('AWS_SECRET_ACCESS_KEY', 'vault-contract-secret-access-key');
  vi.stubEnv('AWS_EC2_METADATA_DISABLED', 'true');
});

afterAll(() => {
  vi.unstubAllEnvs();
});

runSecretBackendContract({ name: 'AWS Secrets Manager', start: () => startFakeAwsSecretsManager() });
