// Where the database is: the URL of CASHTRACK_DATABASE_URL (database.url) read into the dialect
// and what each dialect's driver needs to connect.
import { isAbsolute, resolve } from 'node:path';

export type Dialect = 'sqlite' | 'mysql';

export interface ParsedUrl {
  dialect: Dialect;
  storage?: string;
  host?: string;
  port?: number;
  username?: string;
  password?: string;
  database?: string;
  /** A Unix socket to reach a MariaDB/MySQL server on the same host (`?socket=` in the URL). */
  socketPath?: string;
}

/**
 * Parses `sqlite:path`, `sqlite:///abs/path`, `mysql://u:p@host:3306/db` or `mariadb://...`; a
 * server on the same host may be reached through its Unix socket with `?socket=/path/to.sock`.
 */
export function parseDatabaseUrl(url: string): ParsedUrl {
  if (url.startsWith('sqlite:')) {
    let storage = url.slice('sqlite:'.length);
    if (storage.startsWith('//')) storage = storage.slice(2);
    if (!storage) throw new Error('sqlite URL needs a file path, e.g. sqlite:data/cashtrack.sqlite');
    if (storage !== ':memory:' && !isAbsolute(storage)) storage = resolve(process.cwd(), storage);
    return { dialect: 'sqlite', storage };
  }
  const u = new URL(url);
  if (u.protocol !== 'mysql:' && u.protocol !== 'mariadb:') throw new Error(`unsupported database URL scheme ${u.protocol}`);
  const database = decodeURIComponent(u.pathname.replace(/^\//, ''));
  if (!database) throw new Error('the database URL names no database, e.g. mysql://root@127.0.0.1:3306/cashtrack');
  const unknown = [...u.searchParams.keys()].filter((k) => k !== 'socket');
  if (unknown.length) throw new Error(`unknown database URL parameter ${unknown[0]} (only socket is known)`);
  const socket = u.searchParams.get('socket');
  if (socket !== null && !isAbsolute(socket)) throw new Error('the socket parameter must be an absolute path, e.g. ?socket=/run/mysqld/mysqld.sock');
  return {
    dialect: 'mysql',
    host: u.hostname || '127.0.0.1',
    port: u.port ? Number(u.port) : 3306,
    username: decodeURIComponent(u.username || 'root'),
    password: decodeURIComponent(u.password || ''),
    database,
    ...(socket ? { socketPath: socket } : {}),
  };
}
