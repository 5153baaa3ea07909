import type { Permission } from '@gw/admin/api-types';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { StrictMode, Suspense, useEffect, useState } from 'react';
import { createRoot } from 'react-dom/client';
import { BrowserRouter, Navigate, NavLink, Route, Routes, useLocation } from 'react-router';
import { checkGateway } from './api.ts';
import { AuthProvider, useAuth } from './auth.tsx';
import { Banners } from './banners.tsx';
import { LazyPage, lazyPage, PageBoundary, type PageSource } from './lazy-page.tsx';
import { SsoButton } from './sso-button.tsx';
import { startTheme, ThemeChoice } from './theme.tsx';
import { Field, Form, Loading } from './ui.tsx';
import './styles.css';
import './shell.css';

// One chunk per page (lazy-page.tsx retries a failed chunk once): the first load carries the layout and login.
const Overview = lazyPage(() => import('./pages/overview.tsx'));
const Providers = lazyPage(() => import('./pages/providers.tsx'));
const VirtualKeys = lazyPage(() => import('./pages/virtual-keys.tsx'));
const Owners = lazyPage(() => import('./pages/owners.tsx'));
const Mcp = lazyPage(() => import('./pages/mcp.tsx'));
const Logs = lazyPage(() => import('./pages/logs.tsx'));
const LogDetail = lazyPage(() => import('./pages/log-detail.tsx'));
const Guardrails = lazyPage(() => import('./pages/guardrails.tsx'));
const Alerts = lazyPage(() => import('./pages/alerts.tsx'));
const Access = lazyPage(() => import('./pages/access.tsx'));
const Audit = lazyPage(() => import('./pages/audit.tsx'));
const Config = lazyPage(() => import('./pages/config.tsx'));
const Playground = lazyPage(() => import('./pages/playground.tsx'));
const Routing = lazyPage(() => import('./pages/routing.tsx'));
const RoutingRules = lazyPage(() => import('./pages/routing-rules.tsx'));
const Cache = lazyPage(() => import('./pages/cache.tsx'));
const Vault = lazyPage(() => import('./pages/vault.tsx'));
const Pricing = lazyPage(() => import('./pages/pricing.tsx'));

/** The pages, each shown to roles holding its read permission (the API refuses the rest anyway). */
const PAGES: { path: string; label: string; permission: Permission; source: PageSource }[] = [
  { path: '/', label: 'Overview', permission: 'logs:read', source: Overview },
  { path: '/providers', label: 'Providers', permission: 'providers:read', source: Providers },
  { path: '/routing-rules', label: 'Routing rules', permission: 'routing:read', source: RoutingRules },
  { path: '/keys', label: 'Virtual keys', permission: 'keys:read', source: VirtualKeys },
  { path: '/owners', label: 'Teams & budgets', permission: 'teams:read', source: Owners },
  { path: '/mcp', label: 'MCP clients', permission: 'mcp:read', source: Mcp },
  { path: '/logs', label: 'Logs', permission: 'logs:read', source: Logs },
  { path: '/guardrails', label: 'Guardrails', permission: 'guardrails:read', source: Guardrails },
  { path: '/alerts', label: 'Alerts', permission: 'alerts:read', source: Alerts },
  { path: '/access', label: 'Users & roles', permission: 'users:read', source: Access },
  { path: '/audit', label: 'Audit log', permission: 'audit:read', source: Audit },
  { path: '/config', label: 'System config', permission: 'config:read', source: Config },
  { path: '/playground', label: 'Playground', permission: 'keys:read', source: Playground },
  { path: '/routing', label: 'Routing health', permission: 'health:read', source: Routing },
  { path: '/cache', label: 'Cache', permission: 'logs:read', source: Cache },
  { path: '/vault', label: 'Vault', permission: 'vault:read', source: Vault },
  { path: '/pricing', label: 'Pricing', permission: 'pricing:read', source: Pricing },
];

function Login() {
  const { signIn, endedBecause } = useAuth();
  return (
    <main className="login" id="main">
      <h1>gw</h1>
      {endedBecause && (
        <p className="banner banner-ended" role="status" data-testid="session-ended">
          You were signed out: {endedBecause}. Sign in again.
        </p>
      )}
      <Form label="Sign in" submit="Sign in" onSubmit={(values) => signIn(values.token ?? '')}>
        <Field
          label="Admin token"
          name="token"
          type="password"
          required
          hint="GATEWAY_ADMIN_TOKEN or an API token from Users & roles; kept in this tab only."
        />
      </Form>
      <SsoButton />
    </main>
  );
}

function Layout() {
  const { identity, signOut, can } = useAuth();
  const [menuOpen, setMenuOpen] = useState(false);
  const pages = PAGES.filter((page) => can(page.permission));
  const location = useLocation();
  // Every page opened asks who is signed in, so that a page whose data is still cached never shows it to a
  // session revoked meanwhile: the 401 ends it at that click (auth.tsx), not at the next heartbeat.
  useEffect(() => {
    if (location.pathname) checkGateway();
  }, [location.pathname]);
  // The banners sit outside the grid: a sticky grid item cannot leave its row, and a warning must stay on screen.
  return (
    <>
      <a className="skip" href="#main">
        Skip to content
      </a>
      <Banners />
      <div className="layout">
        <header className="topbar">
          <button
            type="button"
            className="menu-toggle secondary"
            aria-expanded={menuOpen}
            aria-controls="nav"
            onClick={() => setMenuOpen(!menuOpen)}
          >
            Menu
          </button>
          <strong>gw</strong>
          <span className="who" data-testid="who">
            {identity!.label} · <span className="role">{identity!.role}</span>
          </span>
          <ThemeChoice />
          <button type="button" className="secondary" onClick={() => signOut()}>
            Sign out
          </button>
        </header>
        <nav id="nav" aria-label="Pages" className={menuOpen ? 'open' : ''}>
          <ul>
            {pages.map((page) => (
              <li key={page.path}>
                <NavLink to={page.path} end={page.path === '/'} onClick={() => setMenuOpen(false)}>
                  {page.label}
                </NavLink>
              </li>
            ))}
          </ul>
        </nav>
        <main id="main" tabIndex={-1}>
          <PageBoundary resetKey={location.pathname}>
            <Suspense fallback={<Loading />}>
              <Routes>
                {pages.map((page) => (
                  <Route key={page.path} path={page.path} element={<LazyPage source={page.source} />} />
                ))}
                {can('logs:read') && <Route path="/logs/:id" element={<LazyPage source={LogDetail} />} />}
                <Route path="*" element={pages[0] ? <Navigate to={pages[0].path} replace /> : <NoPages />} />
              </Routes>
            </Suspense>
          </PageBoundary>
        </main>
      </div>
    </>
  );
}

function NoPages() {
  return <p>Your role reads none of the pages of this UI.</p>;
}

function App() {
  const { identity, checking } = useAuth();
  if (checking) return <Loading what="Checking who you are" />;
  return identity ? <Layout /> : <Login />;
}

const client = new QueryClient({
  defaultOptions: { queries: { retry: false, refetchOnWindowFocus: false, staleTime: 5_000 } },
});

startTheme();
createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <QueryClientProvider client={client}>
      <BrowserRouter basename="/ui">
        <AuthProvider>
          <App />
        </AuthProvider>
      </BrowserRouter>
    </QueryClientProvider>
  </StrictMode>,
);
