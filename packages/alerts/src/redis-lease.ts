import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type { RedisConnection } from '@gw/shared/store';
import type { AlertLease } from './alert-lease.ts';

const RENEW_LUA = new URL('./lua/renew-lease-1.lua', import.meta.url);
const RELEASE_LUA = new URL('./lua/release-lease-1.lua', import.meta.url);

type LeaseConnection = RedisConnection & {
  renewAlertLease(key: string, token: string, leaseMs: number): Promise<number>;
  releaseAlertLease(key: string, token: string): Promise<number>;
};

/**
 * Cluster mode's evaluator lease: one key in Redis holding the holder's random token with a time to live.
 * The first `hold` is a SET NX PX; each later one renews (PEXPIRE when the token is still ours, in one script),
 * so a holder that dies loses the lease within `leaseMs` and the next replica to ask takes it.
 */
export class RedisLease implements AlertLease {
  private readonly redis: LeaseConnection;
  private readonly key: string;
  private readonly leaseMs: number;
  /** This process's token: a restarted replica is a new holder. */
  readonly token = randomBytes(12).toString('hex');

  private constructor(options: { redis: LeaseConnection; key: string; leaseMs: number }) {
    this.redis = options.redis;
    this.key = options.key;
    this.leaseMs = options.leaseMs;
  }

  /** `prefix` is GW_REDIS_PREFIX; the connection is the caller's (closed by it). */
  static async create(options: {
    redis: RedisConnection;
    prefix: string;
    leaseMs: number;
  }): Promise<RedisLease> {
    const [renew, release] = await Promise.all([readFile(RENEW_LUA, 'utf8'), readFile(RELEASE_LUA, 'utf8')]);
    const connection = options.redis;
    if (!('renewAlertLease' in connection)) {
      connection.defineCommand('renewAlertLease', { numberOfKeys: 1, lua: renew });
      connection.defineCommand('releaseAlertLease', { numberOfKeys: 1, lua: release });
    }
    const redis = connection as LeaseConnection;
    return new RedisLease({ redis, key: `${options.prefix}alerts:lease`, leaseMs: options.leaseMs });
  }

  async hold(): Promise<boolean> {
    const acquired = await this.redis.set(this.key, this.token, 'PX', this.leaseMs, 'NX');
    if (acquired === 'OK') return true;
    return (await this.redis.renewAlertLease(this.key, this.token, this.leaseMs)) === 1;
  }

  async release(): Promise<void> {
    await this.redis.releaseAlertLease(this.key, this.token);
  }
}
