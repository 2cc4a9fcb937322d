// Users and capabilities. Members are users; administrators hold `manage_options`.
import { randomBytes, scrypt as scryptCb, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import { parse as parseCsv } from 'csv-parse/sync';
import Joi from 'joi';
import type { Clock } from '../clock.js';
import { Database } from '../db/database.js';
import { isUniqueViolation } from '../db/errors.js';
import { toInt, toIso } from '../db/values.js';
import { ServiceError } from '../errors.js';
import { HOOKS, type HookBus } from '../hooks/index.js';
import type { LogService } from './logs.js';
import type { SettingsService } from './settings.js';

export const ROLES = ['administrator', 'member'] as const;
export type Role = (typeof ROLES)[number];
export const USER_STATUSES = ['active', 'disabled'] as const;
export type UserStatus = (typeof USER_STATUSES)[number];

const CAPABILITIES: Record<Role, readonly string[]> = {
  administrator: ['manage_options'],
  member: [],
};

export function roleCan(role: string, capability: string): boolean {
  return (CAPABILITIES[role as Role] ?? []).includes(capability);
}

export interface User {
  id: number;
  login: string;
  email: string;
  display_name: string;
  role: Role;
  status: UserStatus;
  created_at: string;
}

/** Input schemas, shared by the CLI and (later) REST routes. */
export const userSchemas = {
  login: Joi.string().trim().min(1).max(60).pattern(/^[A-Za-z0-9._@+-]+$/).message('{{#label}} may contain letters, digits and . _ @ + - only'),
  email: Joi.string().trim().max(191).email({ tlds: false }),
  displayName: Joi.string().trim().min(1).max(191),
  role: Joi.string().valid(...ROLES),
  password: Joi.string().min(8).max(1024),
};

const createSchema = Joi.object({
  login: userSchemas.login.required(),
  email: userSchemas.email.required(),
  display_name: userSchemas.displayName,
  role: userSchemas.role.default('member'),
  password: userSchemas.password,
});

export interface CreateUserInput {
  login: string;
  email: string;
  display_name?: string;
  role?: Role;
  password?: string;
}

export interface ImportReport {
  created: number;
  skipped: { line: number; login: string | null; code: string; reason: string }[];
}

const SCRYPT: ScryptOptions = { N: 2 ** 15, r: 8, p: 1, maxmem: 64 * 1024 * 1024 };

function scrypt(password: string, salt: Buffer, keylen: number): Promise<Buffer> {
  return new Promise((resolve, reject) => scryptCb(password, salt, keylen, SCRYPT, (err, key) => (err ? reject(err) : resolve(key))));
}

/** `$scrypt$N=32768,r=8,p=1$<salt>$<hash>` (base64url). */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await scrypt(password, salt, 32);
  return `$scrypt$N=${SCRYPT.N},r=${SCRYPT.r},p=${SCRYPT.p}$${salt.toString('base64url')}$${key.toString('base64url')}`;
}

export async function verifyPassword(password: string, stored: string | null): Promise<boolean> {
  const m = stored?.match(/^\$scrypt\$N=(\d+),r=(\d+),p=(\d+)\$([\w-]+)\$([\w-]+)$/);
  if (!m) {
    // Spend the same time as a real check so a missing hash is not observable.
    await scrypt(password, Buffer.alloc(16), 32);
    return false;
  }
  const expected = Buffer.from(m[5], 'base64url');
  const key = await new Promise<Buffer>((resolve, reject) =>
    scryptCb(password, Buffer.from(m[4], 'base64url'), expected.length, { N: Number(m[1]), r: Number(m[2]), p: Number(m[3]), maxmem: 256 * 1024 * 1024 }, (err, k) =>
      err ? reject(err) : resolve(k),
    ),
  );
  return timingSafeEqual(key, expected);
}

export const USER_COLUMNS = 'id, login, email, display_name, role, status, created_at';

export function toUser(row: Record<string, unknown>): User {
  return {
    id: toInt(row.id),
    login: String(row.login),
    email: String(row.email),
    display_name: String(row.display_name),
    role: row.role as Role,
    status: row.status as UserStatus,
    created_at: toIso(row.created_at)!,
  };
}

export interface UserServiceDeps {
  db: Database;
  clock: Clock;
  logger: LogService;
  settings: SettingsService;
  hooks: HookBus;
}

/** Creates, finds, lists and imports users. */
export class UserService {
  private readonly deps: UserServiceDeps;

  constructor(deps: UserServiceDeps) {
    this.deps = deps;
  }

  async create(input: CreateUserInput, actor: string = 'system'): Promise<User> {
    const { value, error } = createSchema.validate(input, { errors: { wrap: { label: false } } });
    if (error) {
      const field = error.details[0].path.join('.');
      this.deps.logger.warning('users', 'User not created: invalid input', { field, login: typeof input.login === 'string' ? input.login.slice(0, 60) : null, actor });
      throw new ServiceError('svc_invalid_user', error.details[0].message, 400, { field });
    }
    const passwordHash = value.password ? await hashPassword(value.password) : null;
    const now = this.deps.clock.now();
    const displayName = value.display_name ?? value.login;
    try {
      const { insertId } = await this.deps.db.execute(
        'INSERT INTO users (login, email, display_name, role, password_hash, status, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
        [value.login, value.email, displayName, value.role, passwordHash, 'active', now, now],
      );
      this.deps.logger.info('users', 'User created', { user_id: insertId, login: value.login, role: value.role, actor });
      const user = (await this.get(insertId!))!;
      this.deps.hooks.doAction(HOOKS.userCreated, user, { actor });
      return user;
    } catch (err) {
      if (!isUniqueViolation(err)) throw err;
      const clash = await this.findByLoginOrEmail(value.login, value.email);
      const field = clash && clash.login.toLowerCase() === value.login.toLowerCase() ? 'login' : 'email';
      const refusal = new ServiceError('svc_user_exists', `A user with this ${field} already exists.`, 409, { field });
      this.deps.logger.warning('users', 'User not created: duplicate', { login: value.login, field, actor });
      throw refusal;
    }
  }

  async get(id: number): Promise<User | null> {
    const rows = await this.deps.db.select<Record<string, unknown>>(`SELECT ${USER_COLUMNS} FROM users WHERE id = ?`, [id]);
    return rows[0] ? toUser(rows[0]) : null;
  }

  async require(id: number): Promise<User> {
    const user = await this.get(id);
    if (!user) throw new ServiceError('svc_user_not_found', `User ${id} not found.`, 404);
    return user;
  }

  /** Login first, then email (as the host platform does). */
  async findByLogin(loginOrEmail: string): Promise<User | null> {
    const rows = await this.deps.db.select<Record<string, unknown>>(`SELECT ${USER_COLUMNS} FROM users WHERE login = ?`, [loginOrEmail]);
    if (rows[0]) return toUser(rows[0]);
    if (!loginOrEmail.includes('@')) return null;
    const byEmail = await this.deps.db.select<Record<string, unknown>>(`SELECT ${USER_COLUMNS} FROM users WHERE email = ?`, [loginOrEmail]);
    return byEmail[0] ? toUser(byEmail[0]) : null;
  }

  async requireByLogin(loginOrEmail: string): Promise<User> {
    const user = await this.findByLogin(loginOrEmail);
    if (!user) throw new ServiceError('svc_user_not_found', `No user with login or email "${loginOrEmail}".`, 404);
    return user;
  }

  private async findByLoginOrEmail(login: string, email: string): Promise<User | null> {
    const rows = await this.deps.db.select<Record<string, unknown>>(`SELECT ${USER_COLUMNS} FROM users WHERE login = ? OR email = ? LIMIT 1`, [login, email]);
    return rows[0] ? toUser(rows[0]) : null;
  }

  /** The stored password hash of a login or email, for the login form. */
  async credentialsOf(loginOrEmail: string): Promise<{ user: User; passwordHash: string | null } | null> {
    const user = await this.findByLogin(loginOrEmail);
    if (!user) return null;
    const rows = await this.deps.db.select<{ password_hash: string | null }>('SELECT password_hash FROM users WHERE id = ?', [user.id]);
    return { user, passwordHash: rows[0]?.password_hash ?? null };
  }

  async setPassword(id: number, password: string): Promise<void> {
    const { error } = userSchemas.password.validate(password);
    if (error) throw new ServiceError('svc_invalid_user', 'The password must be 8 to 1024 characters.', 400, { field: 'password' });
    await this.deps.db.execute('UPDATE users SET password_hash = ?, updated_at = ? WHERE id = ?', [await hashPassword(password), this.deps.clock.now(), id]);
    this.deps.logger.info('users', 'Password changed', { user_id: id });
  }

  async setStatus(id: number, status: UserStatus): Promise<User> {
    await this.require(id);
    await this.deps.db.transaction(async (t) => {
      await this.deps.db.execute('UPDATE users SET status = ?, updated_at = ? WHERE id = ?', [status, this.deps.clock.now(), id], t);
      await this.deps.settings.bumpAuthRevision(t);
    });
    this.deps.logger.info('users', `User ${status === 'active' ? 'enabled' : 'disabled'}`, { user_id: id });
    return (await this.get(id))!;
  }

  async hasAdministrator(): Promise<boolean> {
    const rows = await this.deps.db.select("SELECT id FROM users WHERE role = 'administrator' AND status = 'active' LIMIT 1");
    return rows.length > 0;
  }

  /** Users whose login, email or display name starts with `search`; paged, by login. */
  async list(filters: { search?: string; role?: Role; page: number; per_page: number }): Promise<{ items: User[]; total: number }> {
    const where: string[] = [];
    const params: unknown[] = [];
    if (filters.search) {
      const like = Database.likePrefix(filters.search);
      where.push("(login LIKE ? ESCAPE '!' OR email LIKE ? ESCAPE '!' OR display_name LIKE ? ESCAPE '!')");
      params.push(like, like, like);
    }
    if (filters.role) (where.push('role = ?'), params.push(filters.role));
    const clause = where.length ? `WHERE ${where.join(' AND ')}` : '';
    const offset = (filters.page - 1) * filters.per_page;
    const [rows, count] = await Promise.all([
      // MariaDB would otherwise walk the whole login index to avoid a sort, testing every row.
      this.deps.db.select<Record<string, unknown>>(
        `SELECT ${USER_COLUMNS} FROM users${filters.search && this.deps.db.dialect === 'mysql' ? ' IGNORE INDEX FOR ORDER BY (users_login)' : ''} ${clause} ORDER BY login LIMIT ${filters.per_page} OFFSET ${offset}`,
        params,
      ),
      this.deps.db.select<{ n: unknown }>(`SELECT COUNT(*) AS n FROM users ${clause}`, params),
    ]);
    return { items: rows.map(toUser), total: toInt(count[0].n) };
  }

  /**
   * Typeahead: at most `limit` users whose login, email or display name starts with `search`.
   * Three index range scans, merged, so it stays fast on a large table.
   */
  async lookup(search: string, limit = 20): Promise<{ id: number; label: string }[]> {
    const like = Database.likePrefix(search.trim());
    const per = (column: string) => `SELECT * FROM (SELECT ${USER_COLUMNS} FROM users WHERE ${column} LIKE ? ESCAPE '!' ORDER BY ${column} LIMIT ${limit}) AS m_${column}`;
    const rows = await this.deps.db.select<Record<string, unknown>>(
      `${per('login')} UNION ${per('email')} UNION ${per('display_name')}`,
      [like, like, like],
    );
    return rows
      .map(toUser)
      .sort((a, b) => a.login.localeCompare(b.login))
      .slice(0, limit)
      .map((u) => ({ id: u.id, label: `${u.display_name} (${u.login}, ${u.email})` }));
  }

  /**
   * Imports `login,email,display_name[,role]` rows. Each row is created on its own, so a bad row
   * is reported and skipped and never costs the good ones.
   */
  async importCsv(text: string, actor = 'system'): Promise<ImportReport> {
    let records: { record: string[]; info: { lines: number } }[];
    try {
      records = parseCsv(text, { bom: true, skip_empty_lines: true, relax_column_count: true, trim: true, info: true }) as unknown as typeof records;
    } catch (err) {
      throw new ServiceError('svc_invalid_csv', `The file is not valid CSV: ${(err as Error).message}`, 400);
    }
    const report: ImportReport = { created: 0, skipped: [] };
    let start = 0;
    if (records[0] && records[0].record[0]?.toLowerCase() === 'login') start = 1;
    for (let i = start; i < records.length; i++) {
      const line = records[i].info.lines;
      const [login, email, displayName, role, ...rest] = records[i].record;
      if (rest.length > 0 || !login || !email) {
        report.skipped.push({ line, login: login || null, code: 'svc_invalid_row', reason: 'expected login,email,display_name[,role]' });
        continue;
      }
      try {
        await this.create({ login, email, display_name: displayName || undefined, role: (role || 'member') as Role }, actor);
        report.created++;
      } catch (err) {
        if (!(err instanceof ServiceError)) throw err;
        report.skipped.push({ line, login, code: err.code, reason: err.message });
      }
    }
    this.deps.logger.info('users', 'Users imported', { created: report.created, skipped: report.skipped.length, actor });
    return report;
  }
}
