// A user's page (/admin/users/{id}): the profile (POST /users/{id}: display name, email, role, a
// new login password, which signs them out everywhere) and their application passwords
// (GET/POST /users/{id}/application-passwords, DELETE .../{uuid}): a new one is shown once, with a
// copy button, and never again; revoking one asks first and refuses its next request at once.
import { Button, Card, CardBody, CardHeader, Notice, SelectControl, Spinner, TextControl, VisuallyHidden } from '@wordpress/components';
import { useEffect, useState } from 'react';
import { ActionModal } from '../lib/action-modal';
import { api, errorMessage } from '../lib/api';
import { Link } from '../lib/link';
import { ScreenNotices, useScreenNotice } from '../lib/notices';
import type { ScreenProps } from '../screens';
import { ROLES, type User } from './users';

interface AppPassword {
  uuid: string;
  name: string;
  created: string;
  last_used: string | null;
  last_ip: string | null;
}

export default function UserScreen({ rest, query }: ScreenProps) {
  const id = Number(rest[0]);
  if (!Number.isInteger(id) || id < 1 || rest.length > 1)
    return (
      <>
        <h1>Not found</h1>
        <p>
          There is no such user page. <Link to="/users">All users</Link>
        </p>
      </>
    );
  return <UserPage key={id} id={id} created={query.get('created') === '1'} />;
}

function UserPage({ id, created }: { id: number; created: boolean }) {
  const [user, setUser] = useState<User | null | undefined>(undefined);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    api<User>(`/users/${id}`).then(setUser, (err: unknown) => {
      if ((err as { code?: string }).code === 'svc_user_not_found') setUser(null);
      else setError(errorMessage(err));
    });
  }, [id]);
  const crumb = (
    <p className="ct-breadcrumb">
      <Link to="/users">Users</Link>
    </p>
  );
  if (error)
    return (
      <>
        {crumb}
        <Notice status="error" isDismissible={false}>
          {error}
        </Notice>
      </>
    );
  if (user === undefined) return <Spinner />;
  if (user === null)
    return (
      <>
        {crumb}
        <h1>User not found</h1>
        <p>There is no user #{id}.</p>
      </>
    );
  return (
    <>
      {crumb}
      <div className="ct-heading">
        <div>
          <h1>{user.display_name || user.login}</h1>
          <p className="ct-muted">
            {user.login} · {user.role === 'administrator' ? 'Administrator' : 'Member'} · user #{user.id} · <Link to={`/members/${user.id}`}>Member page</Link>
          </p>
        </div>
      </div>
      {created ? (
        <Notice status="success" isDismissible={false}>
          User {user.login} created.
        </Notice>
      ) : null}
      <div className="ct-cards">
        <ProfileCard user={user} onSaved={setUser} />
        <AppPasswordsCard user={user} />
      </div>
    </>
  );
}

function ProfileCard({ user, onSaved }: { user: User; onSaved: (user: User) => void }) {
  const [displayName, setDisplayName] = useState(user.display_name);
  const [email, setEmail] = useState(user.email);
  const [role, setRole] = useState<string>(user.role);
  const [password, setPassword] = useState('');
  const [busy, setBusy] = useState(false);
  const [notice, say] = useScreenNotice();
  const changes: Record<string, string> = {};
  if (displayName.trim() !== user.display_name) changes.display_name = displayName.trim();
  if (email.trim() !== user.email) changes.email = email.trim();
  if (role !== user.role) changes.role = role;
  if (password) changes.password = password;
  const submit = (event: React.FormEvent) => {
    event.preventDefault();
    if (busy || Object.keys(changes).length === 0) return;
    setBusy(true);
    say.clear();
    api<User>(`/users/${user.id}`, { method: 'POST', data: changes }).then(
      (saved) => {
        setBusy(false);
        setPassword('');
        say.success(changes.password ? 'Saved. The new login password is set and every session of this user was signed out.' : 'Saved.');
        onSaved(saved);
      },
      (err: unknown) => {
        setBusy(false);
        say.error(err);
      },
    );
  };
  return (
    <Card>
      <CardHeader>
        <h2>Profile</h2>
      </CardHeader>
      <CardBody>
        <form className="ct-modal-form" onSubmit={submit}>
          <ScreenNotices notice={notice} onDismiss={say.clear} />
          <TextControl __next40pxDefaultSize __nextHasNoMarginBottom label="Display name" value={displayName} onChange={setDisplayName} />
          <TextControl __next40pxDefaultSize __nextHasNoMarginBottom label="Email" type="email" value={email} onChange={setEmail} />
          <SelectControl __next40pxDefaultSize __nextHasNoMarginBottom label="Role" value={role} options={ROLES} onChange={setRole} />
          <TextControl
            __next40pxDefaultSize
            __nextHasNoMarginBottom
            label="New login password"
            type="password"
            autoComplete="new-password"
            value={password}
            onChange={setPassword}
            help="Leave empty to keep the current one. Setting one signs the user out everywhere."
          />
          <div>
            <Button
              __next40pxDefaultSize
              variant="primary"
              type="submit"
              isBusy={busy}
              disabled={busy || Object.keys(changes).length === 0}
              accessibleWhenDisabled
            >
              Save profile
            </Button>
          </div>
        </form>
      </CardBody>
    </Card>
  );
}

function AppPasswordsCard({ user }: { user: User }) {
  const [items, setItems] = useState<AppPassword[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [name, setName] = useState('');
  const [busy, setBusy] = useState(false);
  const [fresh, setFresh] = useState<{ name: string; password: string } | null>(null);
  const [revoking, setRevoking] = useState<AppPassword | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const [tick, setTick] = useState(0);
  const base = `/users/${user.id}/application-passwords`;
  // biome-ignore lint/correctness/useExhaustiveDependencies: tick is the reload.
  useEffect(() => {
    api<AppPassword[]>(base).then(setItems, (err: unknown) => setError(errorMessage(err)));
  }, [base, tick]);
  const add = (event: React.FormEvent) => {
    event.preventDefault();
    if (busy) return;
    setBusy(true);
    setError(null);
    setDone(null);
    api<AppPassword & { password: string }>(base, { method: 'POST', data: { name } }).then(
      (made) => {
        setBusy(false);
        setName('');
        setFresh({ name: made.name, password: made.password });
        setTick((t) => t + 1);
      },
      (err: unknown) => {
        setBusy(false);
        setError(errorMessage(err));
      },
    );
  };
  return (
    <Card>
      <CardHeader>
        <h2>Application passwords</h2>
      </CardHeader>
      <CardBody>
        <p>Scripts and other programs sign in to the API with these (HTTP Basic: the login and the application password).</p>
        {error ? (
          <Notice status="error" isDismissible={false}>
            {error}
          </Notice>
        ) : null}
        {done ? (
          <Notice status="success" onRemove={() => setDone(null)}>
            {done}
          </Notice>
        ) : null}
        {fresh ? <NewPassword {...fresh} login={user.login} onDismiss={() => setFresh(null)} /> : null}
        <form className="ct-inline-form" onSubmit={add}>
          <TextControl __next40pxDefaultSize __nextHasNoMarginBottom label="New application password name" value={name} onChange={setName} />
          <Button __next40pxDefaultSize variant="secondary" type="submit" isBusy={busy} disabled={busy} accessibleWhenDisabled>
            Add application password
          </Button>
        </form>
        {items === null ? <Spinner /> : <AppPasswordTable items={items} onRevoke={setRevoking} />}
      </CardBody>
      {revoking ? (
        <ActionModal<{ deleted: boolean }>
          title="Revoke application password"
          submitLabel="Revoke"
          destructive
          request={() => ({ path: `${base}/${revoking.uuid}`, method: 'DELETE' })}
          onClose={() => setRevoking(null)}
          onDone={() => {
            setDone(`"${revoking.name}" is revoked: requests made with it are refused from now on.`);
            setRevoking(null);
            setTick((t) => t + 1);
          }}
        >
          <p>
            Programs using "{revoking.name}" will be refused from their next request. This cannot be undone; a new application password can be made instead.
          </p>
        </ActionModal>
      ) : null}
    </Card>
  );
}

/** The new password, this once: after this notice is closed or the page left, nobody can see it again. */
function NewPassword({ name, password, login, onDismiss }: { name: string; password: string; login: string; onDismiss: () => void }) {
  const [copied, setCopied] = useState<string | null>(null);
  return (
    // Not a Notice: a notice is also spoken through the page's live region, which would keep the password in the page.
    <section className="ct-new-password" aria-label="New application password">
      <p>
        The application password "{name}" for {login}:
      </p>
      <p>
        <code>{password}</code>{' '}
        <Button
          variant="secondary"
          size="compact"
          onClick={() => {
            navigator.clipboard.writeText(password).then(
              () => setCopied('Copied.'),
              () => setCopied('Could not copy: select the password and copy it.'),
            );
          }}
        >
          Copy
        </Button>{' '}
        <span role="status">{copied}</span>
      </p>
      <p>
        <strong>This is the only time it is shown.</strong> Copy it now and keep it safe: it cannot be seen again, only revoked.
      </p>
      <Button variant="tertiary" size="compact" onClick={onDismiss}>
        Done: hide it
      </Button>
    </section>
  );
}

function AppPasswordTable({ items, onRevoke }: { items: AppPassword[]; onRevoke: (item: AppPassword) => void }) {
  if (items.length === 0) return <p>No application passwords yet.</p>;
  const when = (at: string | null) => (at ? new Date(at).toLocaleString() : '—');
  return (
    <table className="ct-table">
      <thead>
        <tr>
          <th scope="col">Name</th>
          <th scope="col">Created</th>
          <th scope="col">Last used</th>
          <th scope="col">Last IP</th>
          <th scope="col">
            <VisuallyHidden>Actions</VisuallyHidden>
          </th>
        </tr>
      </thead>
      <tbody>
        {items.map((item) => (
          <tr key={item.uuid}>
            <th scope="row">{item.name}</th>
            <td>{when(item.created)}</td>
            <td>{when(item.last_used)}</td>
            <td>{item.last_ip ?? '—'}</td>
            <td>
              <Button variant="link" isDestructive onClick={() => onRevoke(item)} aria-label={`Revoke ${item.name}`}>
                Revoke
              </Button>
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
