import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { StrictMode, Suspense, useState } from 'react';
import { createRoot } from 'react-dom/client';
import { BrowserRouter, Navigate, NavLink, Route, Routes, useLocation } from 'react-router';
import { AuthProvider, useAuth } from './auth.tsx';
import { Banners } from './banners.tsx';
import { LazyPage, lazyPage, PageBoundary } from './lazy-page.tsx';
import { Field, Form, Loading } from './ui.tsx';
import './styles.css';
import './shell.css';

// One chunk per page (React.lazy): the first load carries the layout and login only.
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

/** The pages, each shown to roles holding its read permission (the API refuses the rest anyway). */
const PAGES = [
  { path: '/', label: 'Overview', permission: 'logs:read', element: <LazyPage source={Overview} /> },
  {
    path: '/providers',
    label: 'Providers',
    permission: 'providers:read',
    element: <LazyPage source={Providers} />,
  },
  {
    path: '/keys',
    label: 'Virtual keys',
    permission: 'keys:read',
    element: <LazyPage source={VirtualKeys} />,
  },
  {
    path: '/owners',
    label: 'Teams & budgets',
    permission: 'teams:read',
    element: <LazyPage source={Owners} />,
  },
  { path: '/mcp', label: 'MCP clients', permission: 'mcp:read', element: <LazyPage source={Mcp} /> },
  { path: '/logs', label: 'Logs', permission: 'logs:read', element: <LazyPage source={Logs} /> },
  {
    path: '/guardrails',
    label: 'Guardrails',
    permission: 'guardrails:read',
    element: <LazyPage source={Guardrails} />,
  },
  { path: '/alerts', label: 'Alerts', permission: 'alerts:read', element: <LazyPage source={Alerts} /> },
  {
    path: '/access',
    label: 'Users & roles',
    permission: 'users:read',
    element: <LazyPage source={Access} />,
  },
  { path: '/audit', label: 'Audit log', permission: 'audit:read', element: <LazyPage source={Audit} /> },
  {
    path: '/config',
    label: 'System config',
    permission: 'config:read',
    element: <LazyPage source={Config} />,
  },
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
      <p>
        <a className="button secondary" href="/auth/oidc/login?return_to=/ui/">
          Sign in with SSO
        </a>
      </p>
    </main>
  );
}

function Layout() {
  const { identity, signOut, can } = useAuth();
  const [menuOpen, setMenuOpen] = useState(false);
  const pages = PAGES.filter((page) => can(page.permission));
  const location = useLocation();
  return (
    <div className="layout">
      <a className="skip" href="#main">
        Skip to content
      </a>
      <Banners />
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
        <PageBoundary resetKey={location.pathname}>
          <Suspense fallback={<Loading />}>
            <Routes>
              {pages.map((page) => (
                <Route key={page.path} path={page.path} element={page.element} />
              ))}
              {can('logs:read') && <Route path="/logs/:id" element={<LazyPage source={LogDetail} />} />}
              <Route path="*" element={pages[0] ? <Navigate to={pages[0].path} replace /> : <NoPages />} />
            </Routes>
          </Suspense>
        </PageBoundary>
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
