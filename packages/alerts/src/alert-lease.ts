/**
 * Who evaluates alert rules: one replica at a time. `hold` acquires the lease or renews it, and answers
 * whether this process holds it now; a holder that stops renewing loses it when it expires.
 */
export interface AlertLease {
  hold(): Promise<boolean>;
  /** Gives the lease up (shutdown), so another replica takes over without waiting for it to expire. */
  release(): Promise<void>;
}

/** Embedded mode: the one process always evaluates. */
export const localLease: AlertLease = {
  hold: async () => true,
  release: async () => {},
};
