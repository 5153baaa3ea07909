// The steady load of the fault tests: a few clients sending requests back to back while a fault is played,
// and the spend a key was charged afterwards.
import { get } from './http.ts';

export interface Outcome {
  status: number;
  /** The error's type when the answer was one of gw's errors (for a failed assertion to name it). */
  error?: string | undefined;
  startedAt: number;
  ms: number;
}

/**
 * Four callers sending `send()` back to back until `until` settles; every answer's status and timing, pushed
 * to `outcomes` as they come (a fault script may watch them) and returned.
 */
export async function steadyLoad(
  send: () => Promise<{ status: number; body?: unknown }>,
  until: Promise<unknown>,
  outcomes: Outcome[] = [],
): Promise<Outcome[]> {
  let running = true;
  const stop = () => {
    running = false;
  };
  void until.then(stop, stop);
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      while (running) {
        const startedAt = Date.now();
        const answer = await send();
        const error = (answer.body as { error?: { type?: string } } | undefined)?.error?.type;
        outcomes.push({ status: answer.status, error, startedAt, ms: Date.now() - startedAt });
      }
    }),
  );
  return outcomes;
}

/** Dollars a virtual key was charged in its first budget's current period (admin API). */
export async function charged(
  adminUrl: string,
  keyId: string,
  admin: Record<string, string>,
): Promise<number> {
  const usage = await get(`${adminUrl}/api/governance/virtual-keys/${keyId}/usage`, admin);
  return usage.body.usage[0].entries[0].used as number;
}
