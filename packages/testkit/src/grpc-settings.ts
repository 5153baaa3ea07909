import type { GrpcClientSettings, GrpcSecurity } from '@gw/shared/grpc';

/** The cluster token of in-process gRPC servers and clients under test. */
export const TEST_GRPC_SECURITY: GrpcSecurity = { token: 'gw-test-cluster-token-0123456789abcdef' };

/** Settings of a gRPC client of a test server at `address` (1 s deadline, the test token). */
export function testGrpcClientSettings(address: string): GrpcClientSettings & { callDeadlineMs: number } {
  return { address, security: TEST_GRPC_SECURITY, deadlineMs: 1_000, callDeadlineMs: 60_000 };
}
