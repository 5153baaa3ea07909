// The shared context of the mode suites (gateway-modes.test.ts): the launched gateway, its fake upstreams,
// the config they share, and request helpers bound to the gateway.
import type { FakeOpenAi, GatewayConfigInput, LaunchedGateway } from '@gw/testkit';
import { scaled } from '@gw/testkit';
import { post } from '../support/http.ts';

export const ADMIN_TOKEN = 'admin-token-for-tests';
export const UPSTREAM_KEY = 'sk-upstream-test';
export const MAX_BODY_BYTES = 64 * 1024;
export const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };
export const hello = [{ role: 'user', content: 'Say hello' }];

export interface Fakes {
  /** `openai` and `rotating`. */
  primary: FakeOpenAi;
  /** `openai-backup` (fallbacks) and `slow` (timeouts). */
  backup: FakeOpenAi;
  /** Free for providers created through the admin API. */
  second: FakeOpenAi;
}

/** What a case reads at run time (filled in by the suite's beforeAll). */
export interface ModeContext {
  readonly fakes: Fakes;
  readonly gateway: LaunchedGateway;
  /** The first ingress base URL. */
  readonly base: string;
}

export function network(baseUrl: string) {
  return { base_url: baseUrl, max_retries: 2, retry_backoff_initial_ms: 10, retry_backoff_max_ms: 50 };
}

export function gatewayConfig(fakes: Fakes): GatewayConfigInput {
  return {
    client: { max_request_body_bytes: MAX_BODY_BYTES },
    // The cases share one gateway and make its upstreams fail on purpose, each expecting its own retries and
    // fallbacks from a target in good health: routing health (fast ejection after 5 failures in a row, Failed
    // past 5 % errors over `min_samples` requests; test/routing-health.test.ts) would carry one case's failures
    // into the next one's routing, so neither triggers here.
    load_balancer: { consecutive_failures: 0, min_samples: 100_000 },
    providers: {
      openai: { keys: [{ value: UPSTREAM_KEY }], network_config: network(fakes.primary.url) },
      'openai-backup': {
        keys: [{ value: 'sk-backup-test' }],
        network_config: network(fakes.backup.url),
        custom_provider_config: { base_provider: 'openai' },
      },
      slow: {
        keys: [{ value: 'sk-slow-test' }],
        network_config: { ...network(fakes.backup.url), timeout_ms: 300, max_retries: 0 },
        custom_provider_config: { base_provider: 'openai' },
      },
      rotating: {
        keys: [
          { id: 'key-a', value: 'sk-rotating-a', weight: 1 },
          { id: 'key-b', value: 'sk-rotating-b', weight: 3 },
        ],
        network_config: network(fakes.primary.url),
        custom_provider_config: { base_provider: 'openai' },
      },
    },
  };
}

/** POST helpers bound to the mode's first ingress. */
export function requests(mode: ModeContext) {
  return {
    chat: (body: Record<string, unknown>, path = '/v1/chat/completions') => post(`${mode.base}${path}`, body),
    streamChat: (body: Record<string, unknown>) =>
      fetch(`${mode.base}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
        // Short: a stream that never ends should fail the test, not stall the suite.
        signal: AbortSignal.timeout(scaled(3_000)),
      }),
  };
}
