import { createHash, randomBytes } from 'node:crypto';
import type { Store } from '@gw/shared/store';
import { z } from 'zod';

/**
 * Sign-ins under way and sessions of single sign-on, in the state store (the data directory in embedded mode,
 * Redis in a cluster): a callback may land on another admin replica than the login, and a session made on one
 * replica is good on every other. Both are keyed by the SHA-256 of their secret (the `state` parameter, the
 * session id), never by the secret itself. The store has no expiry of its own: each document carries its
 * `expires_at`, a read past it is a miss, and `sweep` deletes what expired
 * (run at most once a minute per replica when a sign-in starts).
 */
const LOGINS = 'admin-sso-logins';
const SESSIONS = 'admin-sso-sessions';

/** How long a person has to come back from the provider. */
export const LOGIN_TTL_SECONDS = 600;

const loginSchema = z.object({
  nonce: z.string(),
  code_verifier: z.string(),
  return_to: z.string(),
  expires_at: z.string(),
});
export type PendingLogin = z.infer<typeof loginSchema>;

const sessionSchema = z.object({
  user_id: z.string(),
  created_at: z.string(),
  expires_at: z.string(),
  /** Changes made with the cookie must send it back as `x-csrf-token`. */
  csrf_token: z.string(),
});
export type SsoSession = z.infer<typeof sessionSchema>;

const hashOf = (secret: string) => createHash('sha256').update(secret).digest('hex');
const expired = (document: { expires_at: string }, now: number) => Date.parse(document.expires_at) <= now;

export class SsoStore {
  private readonly store: Store;

  constructor(store: Store) {
    this.store = store;
  }

  /** Keeps a sign-in under way until the provider sends the person back with its `state`. */
  putLogin(state: string, login: Omit<PendingLogin, 'expires_at'>, now = Date.now()): Promise<void> {
    const expiresAt = new Date(now + LOGIN_TTL_SECONDS * 1000).toISOString();
    return this.store.put(LOGINS, hashOf(state), { ...login, expires_at: expiresAt });
  }

  /**
   * The sign-in of a `state`, once: it is deleted as it is read, and only the reader whose delete removed it
   * gets it (a replayed callback, even on another replica at the same time, finds nothing).
   */
  async takeLogin(state: string, now = Date.now()): Promise<PendingLogin | undefined> {
    const key = hashOf(state);
    const value = await this.store.get(LOGINS, key);
    if (value === undefined || !(await this.store.delete(LOGINS, key))) return undefined;
    const login = loginSchema.parse(value);
    return expired(login, now) ? undefined : login;
  }

  /** A new session of a user: answers its id (the cookie's value), which is stored only as its hash. */
  async createSession(
    userId: string,
    ttlSeconds: number,
    now = Date.now(),
  ): Promise<{ id: string; session: SsoSession }> {
    const id = randomBytes(32).toString('base64url');
    const session: SsoSession = {
      user_id: userId,
      created_at: new Date(now).toISOString(),
      expires_at: new Date(now + ttlSeconds * 1000).toISOString(),
      csrf_token: randomBytes(32).toString('base64url'),
    };
    await this.store.put(SESSIONS, hashOf(id), session);
    return { id, session };
  }

  /** The session of a cookie's value; undefined when unknown, and `expired` once past its expiry. */
  async findSession(id: string, now = Date.now()): Promise<SsoSession | 'expired' | undefined> {
    const key = hashOf(id);
    const value = await this.store.get(SESSIONS, key);
    if (value === undefined) return undefined;
    const session = sessionSchema.parse(value);
    if (!expired(session, now)) return session;
    await this.store.delete(SESSIONS, key);
    return 'expired';
  }

  /** Ends a session on every replica; true when it existed. */
  deleteSession(id: string): Promise<boolean> {
    return this.store.delete(SESSIONS, hashOf(id));
  }

  /** Deletes expired sign-ins and sessions; answers how many. */
  async sweep(now = Date.now()): Promise<number> {
    let deleted = 0;
    for (const [collection, schema] of [
      [LOGINS, loginSchema],
      [SESSIONS, sessionSchema],
    ] as const) {
      for (const entry of await this.store.list(collection)) {
        const parsed = schema.safeParse(entry.value);
        if (parsed.success && !expired(parsed.data, now)) continue;
        if (await this.store.delete(collection, entry.id)) deleted += 1;
      }
    }
    return deleted;
  }
}
