import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { lazy, StrictMode, Suspense, useState } from 'react';
import { createRoot } from 'react-dom/client';
import { BrowserRouter, Navigate, NavLink, Route, Routes } from 'react-router';
import { AuthProvider, useAuth } from './auth.tsx';
import { SsoButton } from './sso-button.tsx';
import { Field, Form, Loading } from './ui.tsx';
import './styles.css';

// One chunk per page (React.lazy): the first load carries the layout and login only.
const Overview = lazy(() => import('./pages/overview.tsx'));
const Providers = lazy(() => import('./pages/providers.tsx'));
const VirtualKeys = lazy(() => import('./pages/virtual-keys.tsx'));
const Owners = lazy(() => import('./pages/owners.tsx'));
const Mcp = lazy(() => import('./pages/mcp.tsx'));
const Logs = lazy(() => import('./pages/logs.tsx'));
const LogDetail = lazy(() => import('./pages/log-detail.tsx'));
const Guardrails = lazy(() => import('./pages/guardrails.tsx'));
const Alerts = lazy(() => import('./pages/alerts.tsx'));
const Access = lazy(() => import('./pages/access.tsx'));
const Audit = lazy(() => import('./pages/audit.tsx'));
const Config = lazy(() => import('./pages/config.tsx'));
const Playground = lazy(() => import('./pages/playground.tsx'));
const Routing = lazy(() => import('./pages/routing.tsx'));
const Cache = lazy(() => import('./pages/cache.tsx'));
const Vault = lazy(() => import('./pages/vault.tsx'));
const Pricing = lazy(() => import('./pages/pricing.tsx'));

/** The pages, each shown to roles holding its read permission (the API refuses the rest anyway). */
const PAGES = [
  { path: '/', label: 'Overview', permission: 'logs:read', element: <Overview /> },
  { path: '/providers', label: 'Providers', permission: 'providers:read', element: <Providers /> },
  { path: '/keys', label: 'Virtual keys', permission: 'keys:read', element: <VirtualKeys /> },
  { path: '/owners', label: 'Teams & budgets', permission: 'teams:read', element: <Owners /> },
  { path: '/mcp', label: 'MCP clients', permission: 'mcp:read', element: <Mcp /> },
  { path: '/logs', label: 'Logs', permission: 'logs:read', element: <Logs /> },
  { path: '/guardrails', label: 'Guardrails', permission: 'guardrails:read', element: <Guardrails /> },
  { path: '/alerts', label: 'Alerts', permission: 'alerts:read', element: <Alerts /> },
  { path: '/access', label: 'Users & roles', permission: 'users:read', element: <Access /> },
  { path: '/audit', label: 'Audit log', permission: 'audit:read', element: <Audit /> },
  { path: '/config', label: 'System config', permission: 'config:read', element: <Config /> },
  { path: '/playground', label: 'Playground', permission: 'keys:read', element: <Playground /> },
  { path: '/routing', label: 'Routing health', permission: 'health:read', element: <Routing /> },
  { path: '/cache', label: 'Cache', permission: 'logs:read', element: <Cache /> },
  { path: '/vault', label: 'Vault', permission: 'vault:read', element: <Vault /> },
  { path: '/pricing', label: 'Pricing', permission: 'config:read', element: <Pricing /> },
];

function Login() {
  const { signIn } = useAuth();
  return (
    <main className="login" id="main">
      <h1>gw</h1>
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
  return (
    <div className="layout">
      <a className="skip" href="#main">
        Skip to content
      </a>
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
        <Suspense fallback={<Loading />}>
          <Routes>
            {pages.map((page) => (
              <Route key={page.path} path={page.path} element={page.element} />
            ))}
            {can('logs:read') && <Route path="/logs/:id" element={<LogDetail />} />}
            <Route path="*" element={pages[0] ? <Navigate to={pages[0].path} replace /> : <NoPages />} />
          </Routes>
        </Suspense>
      </main>
    </div>
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
