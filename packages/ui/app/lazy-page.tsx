// Pages load as chunks when first opened. A chunk that does not arrive (the gateway restarting, or an upgrade
// that renamed the chunks under a tab opened before it) is asked for once more; then the boundary says so and
// offers a reload instead of a blank page, and opening the page again tries again.
import { Component, type ComponentType, type ErrorInfo, lazy, type ReactNode } from 'react';
import { checkGateway } from './api.ts';

/** The address a failed dynamic import names (Chromium, Firefox and Safari each put it in the message). */
const CHUNK_URL = /(https?:\/\/\S+?\.js)\b/;

async function importOnceMore<T>(load: () => Promise<T>): Promise<T> {
  try {
    return await load();
  } catch (error) {
    // A browser may remember a failed module fetch by its address: the retry asks for it under another one.
    const url = CHUNK_URL.exec(String((error as Error)?.message))?.[1];
    if (!url) return load();
    return import(/* @vite-ignore */ `${url}?retry=${Date.now()}`) as Promise<T>;
  }
}

/** A page's code: the lazy component to render now (a fresh one after a failure). */
export interface PageSource {
  current: ComponentType;
}

/** Pages whose code failed to load: given a fresh lazy component when the boundary is reset. */
const failed = new Set<() => void>();

/**
 * React.lazy over a page module, retried once when its chunk does not load. React.lazy keeps a failure for
 * good (a render retried at once fails the same, so the boundary shows): once the boundary is reset (another page
 * opened), the source holds a fresh lazy component, so the page opened again (the gateway back) loads.
 */
export function lazyPage(load: () => Promise<{ default: ComponentType }>): PageSource {
  const renew = () => {
    source.current = lazy(() =>
      importOnceMore(load).catch((error: unknown) => {
        failed.add(renew);
        throw error;
      }),
    );
  };
  const source: PageSource = { current: () => null };
  renew();
  return source;
}

function renewFailedPages(): void {
  for (const renew of failed) renew();
  failed.clear();
}

/** Renders a page from its source. */
export function LazyPage({ source }: { source: PageSource }) {
  const Page = source.current;
  return <Page />;
}

interface BoundaryState {
  error: Error | undefined;
}

/**
 * Around the routed page: a page that failed to load or to render shows what happened and a reload, while the
 * shell (navigation, sign-out, banners) keeps working. Opening another page clears it (`resetKey`).
 */
export class PageBoundary extends Component<{ resetKey: string; children: ReactNode }, BoundaryState> {
  override state: BoundaryState = { error: undefined };

  static getDerivedStateFromError(error: Error): BoundaryState {
    return { error };
  }

  override componentDidUpdate(previous: { resetKey: string }) {
    if (previous.resetKey !== this.props.resetKey && this.state.error) {
      renewFailedPages();
      this.setState({ error: undefined });
    }
  }

  override componentDidCatch(error: Error, info: ErrorInfo) {
    console.error('page failed', error, info.componentStack);
    // Whether the gateway answers at all: the shell's banner says so at once when it does not.
    checkGateway();
  }

  override render() {
    const { error } = this.state;
    if (!error) return this.props.children;
    const chunk = /dynamically imported module|importing a module script|module script failed/i.test(
      error.message,
    );
    return (
      <section className="panel page-failed" role="alert" aria-labelledby="page-failed">
        <h1 id="page-failed">{chunk ? 'This page could not be loaded' : 'This page failed'}</h1>
        <p>
          {chunk
            ? 'Its code did not arrive, twice: the gateway may be restarting, or gw was upgraded since this tab opened. Reload to get the current version.'
            : `It stopped with an error: ${error.message}`}
        </p>
        <div className="actions">
          <button type="button" onClick={() => window.location.reload()}>
            Reload
          </button>
        </div>
      </section>
    );
  }
}
