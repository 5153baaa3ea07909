import { randomBytes, randomFillSync } from 'node:crypto';

/** Random bytes drawn 256 ids at a time: one randomFillSync per 256 requests instead of one each. */
const pool = Buffer.alloc(10 * 256);
let poolOffset = pool.length;
let lastMs = 0;
let sequence = 0;

/**
 * A request id: a UUIDv7 (RFC 9562), time-ordered, so request-log records (whose id it is) arrive in index order:
 * random ids made SQLite's inserts slower as the table grew. Within one millisecond a 12-bit counter keeps ids of
 * this process increasing.
 */
export function newRequestId(): string {
  if (poolOffset === pool.length) {
    randomFillSync(pool);
    poolOffset = 0;
  }
  const now = Date.now();
  if (now === lastMs) sequence = (sequence + 1) & 0xfff;
  else {
    lastMs = now;
    sequence = pool.readUInt16BE(poolOffset) & 0x7ff;
  }
  const bytes = Buffer.allocUnsafe(16);
  bytes.writeUIntBE(now, 0, 6);
  bytes[6] = 0x70 | (sequence >> 8);
  bytes[7] = sequence & 0xff;
  pool.copy(bytes, 8, poolOffset + 2, poolOffset + 10);
  poolOffset += 10;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** A fresh virtual key value: `sk-gw-` and 40 hex characters. */
export function newVirtualKeyValue(): string {
  return `sk-gw-${randomBytes(20).toString('hex')}`;
}

export function newId(prefix: string): string {
  return `${prefix}_${randomBytes(8).toString('hex')}`;
}
