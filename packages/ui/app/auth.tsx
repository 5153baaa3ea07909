import type { Permission, SessionView, Whoami } from '@gw/admin/api-types';
import { useQueryClient } from '@tanstack/react-query';
import { createContext, type ReactNode, useCallback, useContext, useEffect, useState } from 'react';
import { ApiError, api, getToken, onApiEvents, setCsrfToken, setToken } from './api.ts';
import { ssoConfigured } from './sso-button.tsx';

/** Who is signed in, as `GET /api/whoami` (a token) or `GET /auth/session` (single sign-on) answers. */
export type Identity = Pick<Whoami, 'kind' | 'label' | 'role' | 'permissions' | 'team_ids'> & {
  sso: boolean;
};

interface AuthState {
  identity: Identity | undefined;
  checking: boolean;
  /** Why the last session ended without a sign-out (the API's 401: an expired or revoked token). */
  endedBecause: string | undefined;
  signIn: (token: string) => Promise<void>;
  signOut: () => Promise<void>;
  can: (permission: Permission) => boolean;
}

const AuthContext = createContext<AuthState | undefined>(undefined);

async function whoami(signingIn = false): Promise<Identity> {
  const body = await api<Whoami>('/api/whoami', { signingIn });
  return { ...body, sso: false };
}

async function sessionIdentity(): Promise<Identity | undefined> {
  if (!(await ssoConfigured())) return undefined;
  try {
    const session = await api<SessionView>('/auth/session');
    setCsrfToken(session.csrf_token);
    return {
      kind: 'session',
      label: session.user.email,
      role: session.role,
      permissions: session.permissions,
      team_ids: session.team_ids,
      sso: true,
    };
  } catch (error) {
    if (error instanceof ApiError && (error.status === 401 || error.status === 404)) return undefined;
    throw error;
  }
}

export function AuthProvider({ children }: { children: ReactNode }) {
  const [identity, setIdentity] = useState<Identity | undefined>();
  const [checking, setChecking] = useState(true);
  const [endedBecause, setEndedBecause] = useState<string>();
  const queries = useQueryClient();

  // The one 401 handler: any call refused for the session ends it, and the sign-in page says why.
  useEffect(
    () =>
      onApiEvents({
        unauthorized(reason) {
          setToken(undefined);
          setCsrfToken(undefined);
          setIdentity(undefined);
          setEndedBecause(reason);
          queries.clear();
        },
      }),
    [queries],
  );

  useEffect(() => {
    const check = getToken() ? whoami() : sessionIdentity();
    check
      .then(setIdentity)
      .catch(() => setToken(undefined))
      .finally(() => setChecking(false));
  }, []);

  const signIn = useCallback(async (token: string) => {
    setToken(token);
    try {
      setIdentity(await whoami(true));
      setEndedBecause(undefined);
    } catch (error) {
      setToken(undefined);
      throw error;
    }
  }, []);

  const signOut = useCallback(async () => {
    if (identity?.sso) await api('/auth/logout', { method: 'POST' }).catch(() => undefined);
    setToken(undefined);
    setCsrfToken(undefined);
    setIdentity(undefined);
    setEndedBecause(undefined);
    queries.clear();
  }, [identity, queries]);

  const can = useCallback(
    (permission: Permission) => identity?.permissions.includes(permission) ?? false,
    [identity],
  );

  return (
    <AuthContext.Provider value={{ identity, checking, endedBecause, signIn, signOut, can }}>
      {children}
    </AuthContext.Provider>
  );
}

export function useAuth(): AuthState {
  const state = useContext(AuthContext);
  if (!state) throw new Error('useAuth outside AuthProvider');
  return state;
}
