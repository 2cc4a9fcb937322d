// The frame of every screen: the menu, who is signed in, sign-out, and the current screen.
import { Button, Spinner } from '@wordpress/components';
import { Suspense, useEffect, useState } from 'react';
import { resumeSession, signOut, type SessionUser } from './lib/api';
import { Link } from './lib/link';
import { navigate, useLocation } from './lib/router';
import { SCREENS } from './screens';
import { SignIn } from './sign-in';

export function App() {
  const [user, setUser] = useState<SessionUser | null | undefined>(undefined);
  useEffect(() => {
    resumeSession().then(setUser, () => setUser(null));
  }, []);
  if (user === undefined)
    return (
      <div className="ct-loading" role="status" aria-label="Loading">
        <Spinner />
      </div>
    );
  if (user === null) return <SignIn onSignedIn={setUser} />;
  return (
    <Shell
      user={user}
      onSignedOut={() => {
        setUser(null);
        navigate('/', true);
      }}
    />
  );
}

/** Fetches the lists' DataViews chunk, the app's biggest, so the first list opened from the menu finds it loaded. */
const preloadListTable = () => void import('./lib/list-table');

/**
 * An effect running `task` when the browser is idle, 2 s after the shell rendered: past the first
 * screen's own load (its chunk, its requests, its render), which the task must not slow down.
 */
function whenIdle(task: () => void) {
  return () => {
    let idle: number | undefined;
    const timer = window.setTimeout(() => {
      if (typeof window.requestIdleCallback === 'function') idle = window.requestIdleCallback(task, { timeout: 5_000 });
      else task();
    }, 2_000);
    return () => {
      window.clearTimeout(timer);
      if (idle !== undefined) window.cancelIdleCallback(idle);
    };
  };
}

function Shell({ user, onSignedOut }: { user: SessionUser; onSignedOut: () => void }) {
  const { segments, query } = useLocation();
  const screen = SCREENS.find((s) => s.path === (segments[0] ?? 'overview')) ?? null;
  const Current = screen?.component;
  useEffect(() => {
    document.title = `${screen?.label ?? 'Not found'} ‹ cashtrack`;
  }, [screen]);
  useEffect(whenIdle(preloadListTable), []);
  return (
    <div className="ct-frame">
      <nav className="ct-menu" aria-label="Main menu">
        <div className="ct-brand">cashtrack</div>
        <ul>
          {SCREENS.map((s) => (
            <li key={s.path} className={s === screen ? 'is-current' : undefined}>
              <Link to={`/${s.path}`}>{s.label}</Link>
            </li>
          ))}
        </ul>
      </nav>
      <div className="ct-main">
        <header className="ct-top">
          <span className="ct-user">Signed in as {user.display_name || user.login}</span>
          <Button
            variant="tertiary"
            onClick={() => {
              signOut().then(onSignedOut, onSignedOut);
            }}
          >
            Sign out
          </Button>
        </header>
        <main className="ct-screen" id="main">
          {Current ? (
            <Suspense fallback={<Spinner />}>
              <Current rest={segments.slice(1)} query={query} />
            </Suspense>
          ) : (
            <>
              <h1>Not found</h1>
              <p>There is no screen at this address.</p>
            </>
          )}
        </main>
      </div>
    </div>
  );
}
