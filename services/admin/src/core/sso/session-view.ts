import type { AdminUser } from '../access/identity-store.ts';
import type { Permission } from '../access/permissions.ts';

/** `GET /auth/session`'s answer: who the session's cookie signs in, and the CSRF token its changes send. */
export interface SessionView {
  user: Pick<AdminUser, 'id' | 'email' | 'name'>;
  /** The highest of the user's roles: the one the session acts with. */
  role: string;
  roles: string[];
  permissions: Permission[];
  team_scoped: boolean;
  team_ids: string[];
  created_at: string;
  expires_at: string;
  csrf_token: string;
}
