import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';

/** A key prefix of its own for one test file's run: `gw-test:<pid>:<random>:`. */
export function testRedisPrefix(): string {
  return `gw-test:${process.pid}:${randomBytes(4).toString('hex')}:`;
}

/** Deletes every key under a test run's prefix (SCAN, so a shared Redis is not blocked). */
export async function deleteRedisKeys(url: string, prefix: string): Promise<void> {
  const admin = new Redis(url);
  try {
    let cursor = '0';
    do {
      const [next, keys] = await admin.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 500);
      if (keys.length > 0) await admin.del(...keys);
      cursor = next;
    } while (cursor !== '0');
  } finally {
    await admin.quit();
  }
}
