// Sign-in: login and password, Enter submits, the API's refusal in words.
import { Button, Notice, TextControl } from '@wordpress/components';
import { useState } from 'react';
import { errorMessage, signIn, type SessionUser } from './lib/api';

export function SignIn({ onSignedIn }: { onSignedIn: (user: SessionUser) => void }) {
  const [login, setLogin] = useState('');
  const [password, setPassword] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const submit = (event: React.FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    signIn(login, password).then(onSignedIn, (err: unknown) => {
      setError(errorMessage(err));
      setBusy(false);
    });
  };
  return (
    <main className="ct-sign-in">
      <form onSubmit={submit} aria-labelledby="ct-sign-in-title">
        <h1 id="ct-sign-in-title">cashtrack</h1>
        {error ? (
          <Notice status="error" isDismissible={false}>
            {error}
          </Notice>
        ) : null}
        <TextControl __next40pxDefaultSize label="Username or email" value={login} onChange={setLogin} autoComplete="username" required />
        <TextControl __next40pxDefaultSize label="Password" type="password" value={password} onChange={setPassword} autoComplete="current-password" required />
        <Button __next40pxDefaultSize variant="primary" type="submit" isBusy={busy} disabled={busy}>
          Sign in
        </Button>
      </form>
    </main>
  );
}
