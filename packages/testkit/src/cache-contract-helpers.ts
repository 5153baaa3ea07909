import { randomUUID } from 'node:crypto';
import type { SemanticCache } from '../../cache/src/index.ts';
import { cacheKeys } from '../../cache/src/index.ts';

/** What a group of contract cases is given by runCacheContract. */
export interface CaseContext {
  /** Declares a case (skipped when the implementation says why). */
  contractCase(name: string, body: () => Promise<void>): void;
  /** A cache over a fresh backend of the shared state, closed after the case. */
  open(maxEntriesPerScope?: number): Promise<SemanticCache>;
  /** Moves the case's clock on. */
  advance(ms: number): void;
}

export const DELIVERY_TIMEOUT_MS = 2_000;
export const MINUTE = 60_000;

export function request(question: string) {
  return {
    provider: 'openai',
    model: 'gpt-4o-mini',
    messages: [
      { role: 'system' as const, content: 'Answer briefly.' },
      { role: 'user' as const, content: question },
    ],
    params: { temperature: 0 },
  };
}

export function keysOf(question: string) {
  return cacheKeys(request(question), { embeddingModel: 'openai/text-embedding-3-small' });
}

export function base(scope: string, keys: { exact: string; context: string }) {
  return { scope, hash: keys.exact, context: keys.context, provider: 'openai', model: 'gpt-4o-mini' };
}

export function unique(name: string): string {
  return `${name}-${randomUUID()}`;
}
