// The shell's lasting notices: the gateway not answering (until it does again), and an admin API open to
// anonymous callers (for as long as it is).
import type { SystemSettingsView } from '@gw/admin/api-types';
import { useQueryClient } from '@tanstack/react-query';
import { useEffect, useRef, useState } from 'react';
import { checkGateway, onApiEvents } from './api.ts';
import { useAuth } from './auth.tsx';
import { useApiQuery } from './ui.tsx';

/** How often the shell asks whether the gateway answers: seldom while it does, often while it does not. */
const HEARTBEAT_MS = { answering: 15_000, silent: 2_000 };

/**
 * Follows whether the gateway answers (every API call reports it; a heartbeat covers idle pages). While it does
 * not, a banner says so; when it answers again, the banner goes and every query is read again.
 */
function GatewayBanner() {
  const [answering, setAnswering] = useState(true);
  const queries = useQueryClient();
  const wasSilent = useRef(false);
  useEffect(() => onApiEvents({ reachable: setAnswering }), []);
  useEffect(() => {
    if (answering && wasSilent.current) void queries.invalidateQueries();
    wasSilent.current = !answering;
    // A 401 here ends a revoked session too.
    const timer = setInterval(checkGateway, answering ? HEARTBEAT_MS.answering : HEARTBEAT_MS.silent);
    // A tab shown again asks at once: it may have been hidden for longer than a session lasts.
    const shown = () => {
      if (document.visibilityState === 'visible') checkGateway();
    };
    document.addEventListener('visibilitychange', shown);
    return () => {
      clearInterval(timer);
      document.removeEventListener('visibilitychange', shown);
    };
  }, [answering, queries]);
  if (answering) return null;
  return (
    <p className="banner banner-down" role="alert" data-testid="gateway-down">
      The gateway is not answering. Pages show what they last read; this notice goes when it answers again.
    </p>
  );
}

/** The admin API open to anyone who reaches its port (`client.allow_anonymous_admin`), or this session anonymous. */
function AnonymousAdminBanner() {
  const { identity, can } = useAuth();
  const config = useApiQuery<SystemSettingsView>(can('config:read') ? '/api/config' : undefined);
  const open = identity?.kind === 'anonymous' || config.data?.client?.allow_anonymous_admin === true;
  if (!open) return null;
  return (
    <p className="banner banner-open" role="status" data-testid="anonymous-admin">
      Anonymous admin access is on: anyone who reaches the admin port reads and changes gw without a token.
      Turn off <code>client.allow_anonymous_admin</code> in System config.
    </p>
  );
}

export function Banners() {
  return (
    <div className="banners">
      <GatewayBanner />
      <AnonymousAdminBanner />
    </div>
  );
}
