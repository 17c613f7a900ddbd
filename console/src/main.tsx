/** @module The console's shell: who is logged in, the navigation, and the page of the current path. */
import { render } from 'preact';
import { useCallback, useEffect, useState } from 'preact/hooks';
import { api, ApiProblem, logout, whenUnauthorized } from './api.js';
import { linkTo, navigate, usePath } from './router.js';
import type { Tenant } from './types.js';
import { LoginPage } from './pages/login.js';
import { LiveCallsPage } from './pages/live-calls.js';
import { CallDetailPage } from './call/call-detail.js';
import { HistoryPage } from './pages/history.js';
import { InventoryPage } from './pages/inventory.js';

type Session = { state: 'checking' } | { state: 'out'; notice?: string } | { state: 'in'; tenant: Tenant };

const NAV = [
  { path: '/', label: 'Live calls' },
  { path: '/history', label: 'History' },
  { path: '/inventory', label: 'Inventory' },
] as const;

function Page({ path }: { path: string }) {
  const call = /^\/calls\/([^/]+)$/.exec(path);
  if (call) return <CallDetailPage id={decodeURIComponent(call[1]!)} />;
  if (path === '/history') return <HistoryPage />;
  if (path === '/inventory') return <InventoryPage />;
  return <LiveCallsPage />;
}

function App() {
  const path = usePath();
  const [session, setSession] = useState<Session>({ state: 'checking' });
  const check = useCallback(async () => {
    try {
      setSession({ state: 'in', tenant: await api<Tenant>('GET', '/v1/tenant') });
    } catch (err) {
      setSession({ state: 'out', ...(err instanceof ApiProblem && err.status !== 401 ? { notice: err.message } : {}) });
    }
  }, []);
  useEffect(() => {
    whenUnauthorized(() => setSession({ state: 'out', notice: 'Your session has ended; log in again.' }));
    void check();
  }, [check]);

  if (session.state === 'checking') return <main id="main"><p>Loading…</p></main>;
  if (session.state === 'out') return <LoginPage notice={session.notice} onLoggedIn={() => void check()} />;
  const signOut = async (): Promise<void> => {
    try {
      await logout();
    } finally {
      setSession({ state: 'out', notice: 'Logged out.' });
      navigate('/');
    }
  };
  const current = path.startsWith('/calls/') ? '/' : path;
  return (
    <>
      <a class="skip" href="#main">Skip to content</a>
      <header class="top">
        <nav aria-label="Console">
          <ul>
            {NAV.map((item) => (
              <li key={item.path}><a {...linkTo(item.path)} aria-current={current === item.path ? 'page' : undefined}>{item.label}</a></li>
            ))}
          </ul>
        </nav>
        <p class="who">
          {session.tenant.name} <span class={`badge ${session.tenant.key_kind}`}>{session.tenant.key_kind}</span>
        </p>
        <button type="button" onClick={() => void signOut()}>Log out</button>
      </header>
      <main id="main" tabIndex={-1}>
        <Page path={path} />
      </main>
    </>
  );
}

render(<App />, document.getElementById('app')!);
