// Every migration, in order. One change per file; a new one is appended here.
import type { Migration } from '../src/db/migration.js';
import { createUsers } from './20261122000001-create-users.js';
import { createAppPasswords } from './20261122000002-create-app-passwords.js';
import { createSessions } from './20261122000003-create-sessions.js';
import { createLogs } from './20261122000004-create-logs.js';
import { createSettings } from './20261122000005-create-settings.js';
import { createCounters } from './20261122000006-create-counters.js';

export const migrations: Migration[] = [createUsers, createAppPasswords, createSessions, createLogs, createSettings, createCounters];
