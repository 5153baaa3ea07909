import { createHash } from 'node:crypto';

/** Virtual keys are stored by hash: a leaked store does not leak usable keys. */
export function hashVirtualKey(value: string): string {
  return createHash('sha256').update(value).digest('hex');
}
