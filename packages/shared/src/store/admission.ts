import type {
  AdmitRequest,
  AdmitResult,
  CounterAdjustment,
  CounterCheck,
  DueReservation,
  FailedCheck,
} from './store.ts';

/**
 * How long a settled reservation's id is remembered, so that an admission of the same request arriving late
 * (a governance replica resuming after a pause) counts nothing: far past the 1 s deadline of the call that
 * asked for it, and short enough that the marks of a busy gateway stay small (1,000 requests/s: 300k keys).
 */
export const SETTLED_MARK_MS = 5 * 60 * 1000;

/**
 * The admission decision over current counter values, shared by the memory store (which then applies it)
 * and mirrored, one owner's checks at a time, by take-counters-n.lua on Redis. Pure: reads through `current`, decides, changes nothing.
 */
export function decideAdmission(request: AdmitRequest, current: (key: string) => number): AdmitResult {
  const failing = (checks: CounterCheck[]) =>
    checks.findIndex((check) => current(check.key) + check.need > check.limit);
  const requiredFailure = failing(request.required);
  const passing: number[] = [];
  let firstAlternativeFailure: FailedCheck | undefined;
  request.alternatives.forEach((group, index) => {
    const failure = failing(group);
    if (failure === -1) passing.push(index);
    else if (!firstAlternativeFailure) {
      firstAlternativeFailure = { group: index, index: failure, current: current(group[failure]!.key) };
    }
  });
  if (requiredFailure !== -1) {
    const check = request.required[requiredFailure]!;
    return {
      allowed: false,
      failed: { group: -1, index: requiredFailure, current: current(check.key) },
      passing,
    };
  }
  // No alternative passes (there is one at least, so one failed first).
  if (firstAlternativeFailure && passing.length === 0) {
    return { allowed: false, failed: firstAlternativeFailure, passing };
  }
  return { allowed: true, passing };
}

/** The counters an admitted request adds to: every required check, then the first passing alternative. */
export function admittedAdditions(request: AdmitRequest, result: AdmitResult): CounterAdjustment[] {
  const first = result.passing[0];
  const checks = [...request.required, ...(first === undefined ? [] : request.alternatives[first]!)];
  return checks
    .filter((check) => check.amount !== 0)
    .map((check) => ({ key: check.key, delta: check.amount, expireAtMs: check.expireAtMs }));
}

/** Counters are integers (INCRBY on Redis): money is counted in micro-units. */
export function assertAdmitRequest(request: AdmitRequest): void {
  for (const check of [...request.required, ...request.alternatives.flat()]) {
    for (const field of ['limit', 'need', 'amount', 'expireAtMs'] as const) {
      if (!Number.isSafeInteger(check[field]))
        throw new RangeError(`${field} of counter ${check.key} must be an integer`);
    }
  }
}

/** Counters are integers, since Redis adds with INCRBY. */
/** How long past now a counter must live at least, whatever the caller's clock says (tests use fake clocks). */
export function counterTtlMs(expireAtMs: number): number {
  return Math.max(60_000, expireAtMs - Date.now());
}

/** Reservations are stored as `<alternative>\n<payload>`: the admitted alternative is known only inside the atomic step. */
export function parseReservation(id: string, stored: string): DueReservation {
  const newline = stored.indexOf('\n');
  return { id, alternative: Number(stored.slice(0, newline)), payload: stored.slice(newline + 1) };
}

/** The owner of a counter that names none. */
export const DEFAULT_OWNER = 'gov';

/**
 * One owner's part of an admission: its required checks (with their indexes in `required`) and, for the owner
 * of the alternatives, every alternative.
 */
export interface AdmissionStep {
  owner: string;
  required: Array<{ check: CounterCheck; index: number }>;
  alternatives: CounterCheck[][];
}

/**
 * An admission split by owner, in the order each owner's first required check comes (the owner of the
 * alternatives after the others when it has no required check). Alternatives of no check at all pass without
 * a step. Throws when the alternatives' checks are of more than one owner.
 */
export function admissionSteps(request: AdmitRequest): AdmissionStep[] {
  const steps = new Map<string, AdmissionStep>();
  const stepOf = (owner: string) => {
    let step = steps.get(owner);
    if (!step) {
      step = { owner, required: [], alternatives: [] };
      steps.set(owner, step);
    }
    return step;
  };
  request.required.forEach((check, index) => {
    stepOf(check.owner ?? DEFAULT_OWNER).required.push({ check, index });
  });
  const owners = new Set(request.alternatives.flat().map((check) => check.owner ?? DEFAULT_OWNER));
  if (owners.size > 1) {
    throw new RangeError(`the alternatives of an admission must share one owner (${[...owners].join(', ')})`);
  }
  const [alternativesOwner] = owners;
  if (alternativesOwner !== undefined) stepOf(alternativesOwner).alternatives = request.alternatives;
  return [...steps.values()];
}

/** What an admitted step counted: its required amounts and those of the first passing alternative. */
export function stepAdditions(step: AdmissionStep, passing: number[]): CounterAdjustment[] {
  const first = passing[0];
  const checks = [
    ...step.required.map(({ check }) => check),
    ...(first === undefined ? [] : (step.alternatives[first] ?? [])),
  ];
  return checks
    .filter((check) => check.amount !== 0)
    .map((check) => ({
      key: check.key,
      owner: check.owner,
      delta: check.amount,
      expireAtMs: check.expireAtMs,
    }));
}
