// "Sign in with SSO", only where single sign-on is configured: without `auth.oidc` the admin serves no
// `/auth` routes, and `/auth/session` answers 404.
import { useEffect, useState } from 'react';

export function SsoButton() {
  const [configured, setConfigured] = useState(false);
  useEffect(() => {
    fetch('/auth/session', { credentials: 'same-origin', headers: { accept: 'application/json' } })
      .then((answer) => setConfigured(answer.status !== 404))
      .catch(() => setConfigured(false));
  }, []);
  if (!configured) return null;
  return (
    <p>
      <a className="button secondary" href="/auth/oidc/login?return_to=/ui/">
        Sign in with SSO
      </a>
    </p>
  );
}
