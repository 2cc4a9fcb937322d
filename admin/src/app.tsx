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

function Shell({ user, onSignedOut }: { user: SessionUser; onSignedOut: () => void }) {
  const { segments, query } = useLocation();
  const screen = SCREENS.find((s) => s.path === (segments[0] ?? 'overview')) ?? null;
  const Current = screen?.component;
  useEffect(() => {
    document.title = `${screen?.label ?? 'Not found'} ‹ cashtrack`;
  }, [screen]);
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
