// The one place driver and ORM errors are recognised. Nothing from here reaches a client verbatim:
// the REST host and the CLI only see the ServiceError this returns (or a 500 for the unknown).
import { ServiceError } from '../errors.js';

interface DriverError {
  name?: string;
  code?: string;
  errno?: number;
  parent?: DriverError;
  original?: DriverError;
  message?: string;
}

function codes(err: unknown): { code?: string; errno?: number; name?: string } {
  const e = (err ?? {}) as DriverError;
  const inner = e.original ?? e.parent ?? e;
  return { code: inner.code ?? e.code, errno: inner.errno ?? e.errno, name: e.name };
}

const MYSQL_DEADLOCK = 1213;
const MYSQL_LOCK_WAIT_TIMEOUT = 1205;

/** Deadlock, lock wait timeout or SQLITE_BUSY: the statement can run again safely. */
export function isTransientDbError(err: unknown): boolean {
  const { code, errno } = codes(err);
  return (
    code === 'SQLITE_BUSY' ||
    code === 'SQLITE_LOCKED' ||
    errno === MYSQL_DEADLOCK ||
    errno === MYSQL_LOCK_WAIT_TIMEOUT ||
    code === 'ER_LOCK_DEADLOCK' ||
    code === 'ER_LOCK_WAIT_TIMEOUT'
  );
}

/**
 * A deadlock, or (on Galera) a transaction aborted by the cluster's certification because another
 * node committed a conflicting write first: both are ER_LOCK_DEADLOCK, and the statement or
 * transaction was rolled back whole, so running it again is safe.
 */
export function isDeadlock(err: unknown): boolean {
  const { code, errno } = codes(err);
  return errno === MYSQL_DEADLOCK || code === 'ER_LOCK_DEADLOCK';
}

/**
 * A Galera node that is not part of the primary component (cut off from the cluster, or still
 * joining) refuses every statement with ER_UNKNOWN_COM_ERROR "WSREP has not yet prepared node for
 * application use": the database is unavailable on that node.
 */
function isWsrepNotReady(err: unknown): boolean {
  const { code, errno } = codes(err);
  const e = (err ?? {}) as DriverError;
  return (errno === 1047 || code === 'ER_UNKNOWN_COM_ERROR') && /WSREP/i.test(String(e.original?.message ?? e.parent?.message ?? e.message));
}

/** MariaDB/MySQL gave up waiting for a row lock (`innodb_lock_wait_timeout`). */
export function isLockWaitTimeout(err: unknown): boolean {
  const { code, errno } = codes(err);
  return errno === MYSQL_LOCK_WAIT_TIMEOUT || code === 'ER_LOCK_WAIT_TIMEOUT';
}

const UNAVAILABLE_NAMES = new Set([
  'SequelizeConnectionError',
  'SequelizeConnectionRefusedError',
  'SequelizeHostNotFoundError',
  'SequelizeHostNotReachableError',
  'SequelizeConnectionTimedOutError',
  'SequelizeConnectionAcquireTimeoutError',
  'SequelizeAccessDeniedError',
  'SequelizeConnectionError',
]);
const UNAVAILABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'PROTOCOL_CONNECTION_LOST',
  'ER_CON_COUNT_ERROR',
  'SQLITE_CANTOPEN',
  'SQLITE_READONLY',
  'SQLITE_IOERR',
  'SQLITE_FULL',
]);

/** Unique-constraint violation (duplicate key). */
export function isUniqueViolation(err: unknown): boolean {
  const { code, name, errno } = codes(err);
  return (
    name === 'SequelizeUniqueConstraintError' ||
    code === 'ER_DUP_ENTRY' ||
    errno === 1062 ||
    code === 'SQLITE_CONSTRAINT_UNIQUE' ||
    /UNIQUE constraint failed/.test(String((err as DriverError)?.message))
  );
}

/** Maps an infrastructure failure to a ServiceError with a retry hint, or returns null. */
export function translateDbError(err: unknown): ServiceError | null {
  if (err instanceof ServiceError) return err;
  const { code, name } = codes(err);
  if (code === 'SQLITE_CORRUPT' || code === 'SQLITE_NOTADB') {
    return new ServiceError('svc_database_corrupt', 'The database file is damaged or is not a SQLite database. Restore it from a backup.', 503);
  }
  if (isTransientDbError(err)) {
    return new ServiceError('svc_database_busy', 'The database is busy. Retry shortly.', 503, { retry_after: 1 }, { 'Retry-After': '1' });
  }
  if ((name && UNAVAILABLE_NAMES.has(name)) || (code && UNAVAILABLE_CODES.has(code)) || isWsrepNotReady(err)) {
    return new ServiceError('svc_database_unavailable', 'The database is unavailable. Retry shortly.', 503, { retry_after: 5 }, { 'Retry-After': '5' });
  }
  return null;
}
