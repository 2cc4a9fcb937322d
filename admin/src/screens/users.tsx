// Users: every user (GET /users, the views row by role from GET /users/counts, prefix search,
// sortable columns), "Add user" in a modal (POST /users), and each row a link to the user's page
// (/users/{id}: user.tsx) where the profile, the login password and the application passwords are.
import { Button, SelectControl, TextControl } from '@wordpress/components';
import type { Field } from '@wordpress/dataviews';
import { useState } from 'react';
import { ActionModal } from '../lib/action-modal';
import { Link } from '../lib/link';
import { ListView, type ListSpec, useListData } from '../lib/list';
import { navigate } from '../lib/router';
import type { ScreenProps } from '../screens';
import UserScreen from './user';

/** A user as the API answers it (never a password). */
export interface User {
  id: number;
  login: string;
  email: string;
  display_name: string;
  role: 'administrator' | 'member';
  status: 'active' | 'disabled';
  created_at: string;
}

export const ROLES = [
  { value: 'administrator', label: 'Administrator' },
  { value: 'member', label: 'Member' },
];

const fields: Field<User>[] = [
  {
    id: 'login',
    label: 'Login',
    enableHiding: false,
    filterBy: false,
    render: ({ item }) => <Link to={`/users/${item.id}`}>{item.login}</Link>,
  },
  { id: 'display_name', label: 'Name', filterBy: false },
  { id: 'email', label: 'Email', filterBy: false },
  { id: 'role', label: 'Role', elements: ROLES, filterBy: { operators: ['isAny', 'isNone'] } },
  { id: 'status', label: 'Status', enableSorting: false, filterBy: false },
  { id: 'id', label: 'ID', type: 'integer', filterBy: false },
  { id: 'created_at', label: 'Registered', type: 'datetime', enableSorting: false, filterBy: false },
];

const spec: ListSpec<User> = {
  screen: '/users',
  path: '/users',
  fields,
  columns: ['display_name', 'email', 'role', 'created_at'],
  sort: { field: 'login', direction: 'asc' },
  filters: [{ field: 'role', kind: 'any' }],
  search: true,
  views: { param: 'role', values: ROLES, countsPath: '/users/counts' },
};

/** /users is the list, /users/{id} a user's page. */
export default function UsersScreen({ rest, query }: ScreenProps) {
  if (rest[0]) return <UserScreen rest={rest} query={query} />;
  return <UsersList query={query} />;
}

function UsersList({ query }: { query: URLSearchParams }) {
  const list = useListData(spec, query);
  const [adding, setAdding] = useState(false);
  return (
    <>
      <div className="ct-heading">
        <h1>Users</h1>
        <Button __next40pxDefaultSize variant="primary" onClick={() => setAdding(true)}>
          Add user
        </Button>
      </div>
      <ListView spec={spec} query={query} list={list} />
      {adding ? <AddUserModal onClose={() => setAdding(false)} onDone={(user) => navigate(`/users/${user.id}?created=1`)} /> : null}
    </>
  );
}

function AddUserModal({ onClose, onDone }: { onClose: () => void; onDone: (user: User) => void }) {
  const [login, setLogin] = useState('');
  const [email, setEmail] = useState('');
  const [displayName, setDisplayName] = useState('');
  const [role, setRole] = useState('member');
  const [password, setPassword] = useState('');
  return (
    <ActionModal<User>
      title="Add user"
      submitLabel="Add user"
      ready={login.trim() !== '' && email.trim() !== ''}
      request={() => ({
        path: '/users',
        data: {
          login: login.trim(),
          email: email.trim(),
          role,
          ...(displayName.trim() ? { display_name: displayName.trim() } : {}),
          ...(password ? { password } : {}),
        },
      })}
      onClose={onClose}
      onDone={onDone}
    >
      <TextControl __next40pxDefaultSize __nextHasNoMarginBottom label="Login (required)" value={login} onChange={setLogin} autoComplete="off" />
      <TextControl __next40pxDefaultSize __nextHasNoMarginBottom label="Email (required)" type="email" value={email} onChange={setEmail} />
      <TextControl
        __next40pxDefaultSize
        __nextHasNoMarginBottom
        label="Display name"
        value={displayName}
        onChange={setDisplayName}
        help="Default: the login."
      />
      <SelectControl __next40pxDefaultSize __nextHasNoMarginBottom label="Role" value={role} options={ROLES} onChange={setRole} />
      <TextControl
        __next40pxDefaultSize
        __nextHasNoMarginBottom
        label="Login password"
        type="password"
        autoComplete="new-password"
        value={password}
        onChange={setPassword}
        help="Optional, 8 characters or more. Without one the user signs in with application passwords only."
      />
    </ActionModal>
  );
}
