// Which start-up failures start-up tries again (a store or peer not answering yet) and which end the process at
// once (a refusal that no wait changes). The retries themselves, against a Redis that comes up late:
// test/readiness.test.ts.
import { describe, expect, it } from 'vitest';
import { ConfigError } from './config/gateway-config.ts';
import { GatewayError } from './errors/gateway-error.ts';
import { transientStartFailure } from './service-lifecycle.ts';

const withCode = (message: string, code: string) => Object.assign(new Error(message), { code });
const named = (message: string, name: string) => Object.assign(new Error(message), { name });

describe('transientStartFailure', () => {
  it.each<[string, unknown]>([
    [
      'a Redis refusing connections',
      new Error('Redis at redis://127.0.0.1:1 is unreachable after 5 attempts: connect ECONNREFUSED', {
        cause: withCode('connect ECONNREFUSED 127.0.0.1:1', 'ECONNREFUSED'),
      }),
    ],
    ['a Redis that closed the connection', new Error('Redis at redis://x is unreachable after 5 attempts')],
    [
      'a first command that timed out (503 of the store)',
      new GatewayError({ type: 'service_unavailable', message: 'the state store (Redis) is unavailable' }),
    ],
    [
      'ioredis giving up a command',
      named('Reached the max retries per request limit', 'MaxRetriesPerRequestError'),
    ],
    ['a name not in DNS yet', withCode('getaddrinfo ENOTFOUND redis.gw.svc', 'ENOTFOUND')],
    ['a PostgreSQL still starting', withCode('the database system is starting up', '57P03')],
    [
      'a cause several levels down',
      new Error('start', { cause: new Error('open', { cause: withCode('reset', 'ECONNRESET') }) }),
    ],
  ])('tries again after %s', (_case, error) => {
    expect(transientStartFailure(error)).toBe(true);
  });

  it.each<[string, unknown]>([
    ['a bad config', new ConfigError('cache.enabled: a cluster keeps cache entries in Redis')],
    ['a port in use', withCode('listen EADDRINUSE: address already in use 127.0.0.1:8080', 'EADDRINUSE')],
    ['a wrong Redis password', named('WRONGPASS invalid username-password pair', 'ReplyError')],
    [
      'a Redis unreachable because of its password',
      new Error('Redis at redis://x is unreachable after 5 attempts: WRONGPASS', {
        cause: named('WRONGPASS invalid username-password pair', 'ReplyError'),
      }),
    ],
    ['a refusal of the gateway', new GatewayError({ type: 'invalid_request', message: 'bad' })],
    ['a bug', new TypeError("Cannot read properties of undefined (reading 'x')")],
    ['something that is not an error', 'just a string'],
  ])('ends at once on %s', (_case, error) => {
    expect(transientStartFailure(error)).toBe(false);
  });
});
