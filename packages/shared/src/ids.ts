import { randomBytes, randomUUID } from 'node:crypto';

export function newRequestId(): string {
  return randomUUID();
}

/** A fresh virtual key value: `sk-gw-` and 40 hex characters. */
export function newVirtualKeyValue(): string {
  return `sk-gw-${randomBytes(20).toString('hex')}`;
}

export function newId(prefix: string): string {
  return `${prefix}_${randomBytes(8).toString('hex')}`;
}
