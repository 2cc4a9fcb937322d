// Users and capabilities. Members are users; administrators hold `manage_options`.
import { parse as parseCsv } from 'csv-parse/sync';
import type { Clock } from '../../clock.js';
import { Database, type Transaction } from '../../db/database.js';
import { isUniqueViolation } from '../../db/errors.js';
import { countByStatus, ListWhere, orderClause, pageClause, type StatusCounts } from '../../db/lists.js';
import { toInt, toIso } from '../../db/values.js';
import { ServiceError } from '../../errors.js';
import { HOOKS, type HookBus } from '../../hooks/index.js';
import type { LogService } from '../logs/index.js';
import type { SettingsService } from '../settings/index.js';
import { hashPassword, needsRehash, verifyPassword } from './passwords.js';
import {
  createSchema,
  type CreateUserInput,
  ROLES,
  type Role,
  type UpdateUserInput,
  USER_ORDERBY,
  type UserCountFilters,
  type UserFilters,
  type UserStatus,
  updateSchema,
  userSchemas,
} from './schemas.js';

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

export interface ImportReport {
  created: number;
  skipped: { line: number; login: string | null; code: string; reason: string }[];
}

/** The login (and display name) an erased member keeps: `erased-<id>`; the e-mail is this at `invalid`. */
export function erasedLogin(id: number): string {
  return `erased-${id}`;
}

/** The search of the users list and its counts: a prefix of the login, email or display name. */
function userWhere(filters: { search?: string }): ListWhere {
  const where = new ListWhere();
  if (filters.search) {
    const like = Database.likePrefix(filters.search);
    where.add("(login LIKE ? ESCAPE '!' OR email LIKE ? ESCAPE '!' OR display_name LIKE ? ESCAPE '!')", like, like, like);
  }
  return where;
}

export const USER_COLUMNS = 'id, login, email, display_name, role, status, created_at';

/** A lookup's answer: the id and `Display Name (login, email)`. */
function lookupItem(row: Record<string, unknown>): { id: number; label: string } {
  const u = toUser(row);
  return { id: u.id, label: `${u.display_name} (${u.login}, ${u.email})` };
}

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
  /** log2 of scrypt's N for new hashes: 17 or more (lower only in tests, to keep them fast). */
  scryptLogN?: number;
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
      this.deps.logger.warning('users', 'User not created: invalid input', {
        field,
        login: typeof input.login === 'string' ? input.login.slice(0, 60) : null,
        actor,
      });
      throw new ServiceError('svc_invalid_user', error.details[0].message, 400, { field });
    }
    const passwordHash = value.password ? await this.hashPassword(value.password) : null;
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

  /** 404 svc_member_not_found unless user `id` exists (inside `t` when given, so the answer holds for it). */
  async requireMemberId(id: number, t?: Transaction): Promise<void> {
    const [row] = await this.deps.db.select('SELECT id FROM users WHERE id = ?', [id], t);
    if (!row) throw new ServiceError('svc_member_not_found', `Member ${id} not found.`, 404, { member_id: id });
  }

  /** Which of `ids` are users, in chunks of 500 (the orders' batches ask for many at once). */
  async existingIds(ids: readonly number[]): Promise<Set<number>> {
    const known = new Set<number>();
    for (let i = 0; i < ids.length; i += 500) {
      const chunk = ids.slice(i, i + 500);
      const rows = await this.deps.db.select<{ id: unknown }>(`SELECT id FROM users WHERE id IN (${chunk.map(() => '?').join(', ')})`, chunk);
      for (const row of rows) known.add(toInt(row.id));
    }
    return known;
  }

  /** The id of the user with this exact login (as the database's collation compares), or null. */
  async idByLogin(login: string): Promise<number | null> {
    const [row] = await this.deps.db.select<{ id: unknown }>('SELECT id FROM users WHERE login = ?', [login]);
    return row ? toInt(row.id) : null;
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

  /**
   * A member as administrators name one: digits are a user id, anything else a login or email.
   * The one resolver behind every CLI command that takes a member and the tracking-link service;
   * 404 svc_member_not_found with `member_id` or `member`.
   */
  async resolveMember(member: string | number): Promise<User> {
    const key = typeof member === 'number' ? String(member) : typeof member === 'string' ? member.trim() : '';
    const byId = /^\d{1,15}$/.test(key);
    const user = byId ? await this.get(Number(key)) : key && key.length <= 191 ? await this.findByLogin(key) : null;
    if (!user)
      throw new ServiceError(
        'svc_member_not_found',
        `Member ${key.slice(0, 191)} not found.`,
        404,
        byId ? { member_id: Number(key) } : { member: key.slice(0, 191) },
      );
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

  /** A new hash of `password` at the configured cost. */
  hashPassword(password: string): Promise<string> {
    return hashPassword(password, this.deps.scryptLogN);
  }

  /** Checks a login password against its stored hash (or spends the same time when there is none). */
  checkPassword(password: string, stored: string | null): Promise<boolean> {
    return verifyPassword(password, stored, this.deps.scryptLogN);
  }

  /** Whether a stored hash should be replaced at the configured cost once its password is known. */
  needsRehash(stored: string | null): boolean {
    return stored !== null && needsRehash(stored, this.deps.scryptLogN);
  }

  /**
   * Replaces a hash that was just verified with a stronger one of the same password, unless the
   * password changed in the meantime (then the newer hash stays).
   */
  async upgradePasswordHash(id: number, verified: string, rehashed: string, t?: Transaction): Promise<boolean> {
    const { affected } = await this.deps.db.execute('UPDATE users SET password_hash = ? WHERE id = ? AND password_hash = ?', [rehashed, id, verified], t);
    if (affected > 0) this.deps.logger.info('users', 'Password hash upgraded', { user_id: id });
    return affected > 0;
  }

  async setPassword(id: number, password: string): Promise<void> {
    const { error } = userSchemas.password.validate(password);
    if (error) throw new ServiceError('svc_invalid_user', 'The password must be 8 to 1024 characters.', 400, { field: 'password' });
    await this.refuseErased(id);
    await this.deps.db.execute('UPDATE users SET password_hash = ?, updated_at = ? WHERE id = ?', [
      await this.hashPassword(password),
      this.deps.clock.now(),
      id,
    ]);
    this.deps.logger.info('users', 'Password changed', { user_id: id });
  }

  async setStatus(id: number, status: UserStatus): Promise<User> {
    await this.require(id);
    await this.refuseErased(id);
    await this.deps.db.transaction(async (t) => {
      await this.deps.db.execute('UPDATE users SET status = ?, updated_at = ? WHERE id = ?', [status, this.deps.clock.now(), id], t);
      await this.deps.settings.bumpAuthRevision(t);
    });
    this.deps.logger.info('users', `User ${status === 'active' ? 'enabled' : 'disabled'}`, { user_id: id });
    return (await this.get(id))!;
  }

  /**
   * The account as a member's data export shows it: the user, when it was last changed, whether it
   * has a login password (never the hash) and when it was erased.
   */
  async personalData(id: number): Promise<(User & { updated_at: string; has_password: boolean; erased_at: string | null }) | null> {
    const [row] = await this.deps.db.select<Record<string, unknown>>(`SELECT ${USER_COLUMNS}, updated_at, password_hash, erased_at FROM users WHERE id = ?`, [
      id,
    ]);
    if (!row) return null;
    return { ...toUser(row), updated_at: toIso(row.updated_at)!, has_password: row.password_hash !== null, erased_at: toIso(row.erased_at) };
  }

  /** Locks user `id` for its erasure in `t` and answers it with when it was erased (null: not yet); 404 svc_member_not_found. */
  async lockForErasure(id: number, t: Transaction): Promise<{ user: User; erasedAt: string | null }> {
    const [row] = await this.deps.db.select<Record<string, unknown>>(
      `SELECT ${USER_COLUMNS}, erased_at FROM users WHERE id = ?${this.deps.db.forUpdate()}`,
      [id],
      t,
    );
    if (!row) throw new ServiceError('svc_member_not_found', `Member ${id} not found.`, 404, { member_id: id });
    return { user: toUser(row), erasedAt: toIso(row.erased_at) };
  }

  /**
   * Anonymises user `id` in `t`: login `erased-<id>`, e-mail `erased-<id>@invalid`, the display name
   * the same placeholder, no password, disabled, `erased_at` set. Moves the auth revision so every
   * process drops a cached credential of the account.
   */
  async erase(id: number, t: Transaction): Promise<void> {
    const placeholder = erasedLogin(id);
    const now = this.deps.clock.now();
    await this.deps.db.execute(
      "UPDATE users SET login = ?, email = ?, display_name = ?, password_hash = NULL, status = 'disabled', erased_at = ?, updated_at = ? WHERE id = ?",
      [placeholder, `${placeholder}@invalid`, placeholder, now, now, id],
      t,
    );
    await this.deps.settings.bumpAuthRevision(t);
  }

  /** 409 svc_member_erased when user `id` was erased: an erased account is never enabled or edited again. */
  private async refuseErased(id: number, t?: Transaction): Promise<void> {
    const [row] = await this.deps.db.select<{ erased_at: unknown }>('SELECT erased_at FROM users WHERE id = ?', [id], t);
    if (row && row.erased_at !== null)
      throw new ServiceError('svc_member_erased', `Member ${id} was erased: the account cannot be enabled or changed again.`, 409, { member_id: id });
  }

  async hasAdministrator(): Promise<boolean> {
    const rows = await this.deps.db.select("SELECT id FROM users WHERE role = 'administrator' AND status = 'active' LIMIT 1");
    return rows.length > 0;
  }

  /** Users whose login, email or display name starts with `search`, of some roles; paged, sorted (default by login). */
  async list(filters: UserFilters): Promise<{ items: User[]; total: number }> {
    const where = userWhere(filters).anyOf('role', filters.role).noneOf('role', filters.role_exclude);
    const order = orderClause(USER_ORDERBY, filters, 'id', { orderby: 'login', order: 'asc' });
    // MariaDB would otherwise walk the whole login index to avoid a sort, testing every row.
    const from =
      filters.search && (filters.orderby ?? 'login') === 'login' ? this.deps.db.indexHint('users', 'IGNORE INDEX FOR ORDER BY (users_login)') : 'users';
    const [rows, count] = await Promise.all([
      this.deps.db.select<Record<string, unknown>>(`SELECT ${USER_COLUMNS} FROM ${from} ${where.sql} ${order} ${pageClause(filters)}`, where.params),
      this.deps.db.select<{ n: unknown }>(`SELECT COUNT(*) AS n FROM users ${where.sql}`, where.params),
    ]);
    return { items: rows.map(toUser), total: toInt(count[0].n) };
  }

  /** The views row of the users list: users per role (every role, 0 included) under its search. */
  counts(filters: UserCountFilters): Promise<StatusCounts> {
    return countByStatus(this.deps.db, 'users', 'role', userWhere(filters), ROLES);
  }

  /**
   * Changes a user's email, display name or role. 404 svc_user_not_found, 400 svc_invalid_user,
   * 409 svc_user_exists (the email is taken), 409 svc_last_administrator (the change would leave no
   * active administrator: the administrators are locked first, so two demotions at once cannot
   * both pass). Moves the auth revision, so a cached credential is read again with its new role.
   */
  async update(id: number, input: Omit<UpdateUserInput, 'password'>, actor = 'system'): Promise<User> {
    const { value, error } = updateSchema.validate(input, { errors: { wrap: { label: false } } });
    if (error) throw new ServiceError('svc_invalid_user', error.details[0].message, 400, { field: error.details[0].path.join('.') });
    try {
      await this.deps.db.transaction(async (t) => {
        const admins = await this.deps.db.select<{ id: unknown }>(
          `SELECT id FROM users WHERE role = 'administrator' AND status = 'active'${this.deps.db.forUpdate()}`,
          [],
          t,
        );
        const [row] = await this.deps.db.select<Record<string, unknown>>(`SELECT ${USER_COLUMNS} FROM users WHERE id = ?${this.deps.db.forUpdate()}`, [id], t);
        if (!row) throw new ServiceError('svc_user_not_found', `User ${id} not found.`, 404);
        await this.refuseErased(id, t);
        const user = toUser(row);
        if (value.role === 'member' && user.role === 'administrator' && user.status === 'active' && admins.every((a) => toInt(a.id) === id)) {
          throw new ServiceError(
            'svc_last_administrator',
            'This is the last active administrator: make another user an administrator first, so that someone can still manage the site.',
            409,
            { user_id: id },
          );
        }
        const sets = Object.entries(value).filter(([, v]) => v !== undefined);
        await this.deps.db.execute(
          `UPDATE users SET ${sets.map(([k]) => `${k} = ?`).join(', ')}, updated_at = ? WHERE id = ?`,
          [...sets.map(([, v]) => v), this.deps.clock.now(), id],
          t,
        );
        await this.deps.settings.bumpAuthRevision(t);
      });
    } catch (err) {
      if (err instanceof ServiceError) this.deps.logger.warning('users', 'User not changed', { user_id: id, code: err.code, actor });
      if (!isUniqueViolation(err)) throw err;
      this.deps.logger.warning('users', 'User not changed: duplicate', { user_id: id, field: 'email', actor });
      throw new ServiceError('svc_user_exists', 'A user with this email already exists.', 409, { field: 'email' });
    }
    this.deps.logger.info('users', 'User changed', { user_id: id, fields: Object.keys(value), actor });
    return (await this.get(id))!;
  }

  /**
   * Typeahead: a page of the users whose login, email or display name starts with `search`, by
   * login, and how many there are. Each column is its own index range scan, cut at the end of the
   * page, and their union is sorted: the cost grows with the page, never with the table.
   * `include` keeps only those ids (at most 20, by primary key), still matching the search if any.
   */
  async lookup(search: string, page = { page: 1, per_page: 20 }, include?: number[]): Promise<{ items: { id: number; label: string }[]; total: number }> {
    const prefix = search.trim();
    const like = Database.likePrefix(prefix);
    if (include?.length) return this.lookupIds(include, prefix === '' ? null : like, page);
    const end = page.page * page.per_page;
    // An empty search matches every user by login alone: one ordered index walk, one count.
    const columns = prefix === '' ? ['login'] : ['login', 'email', 'display_name'];
    const branch = (column: string, select: string, limit: string) =>
      `SELECT * FROM (SELECT ${select} FROM users WHERE ${column} LIKE ? ESCAPE '!'${limit}) AS m_${column}`;
    const [rows, count] = await Promise.all([
      this.deps.db.select<Record<string, unknown>>(
        `SELECT * FROM (${columns.map((c) => branch(c, USER_COLUMNS, ` ORDER BY login, id LIMIT ${end}`)).join(' UNION ')}) AS matches ORDER BY login, id LIMIT ${page.per_page} OFFSET ${end - page.per_page}`,
        columns.map(() => like),
      ),
      this.deps.db.select<{ n: unknown }>(
        `SELECT COUNT(*) AS n FROM (${columns.map((c) => branch(c, 'id', '')).join(' UNION ')}) AS matches`,
        columns.map(() => like),
      ),
    ]);
    return { items: rows.map(lookupItem), total: toInt(count[0].n) };
  }

  private async lookupIds(ids: number[], like: string | null, page: { page: number; per_page: number }) {
    const where = `id IN (${ids.map(() => '?').join(', ')})${like ? " AND (login LIKE ? ESCAPE '!' OR email LIKE ? ESCAPE '!' OR display_name LIKE ? ESCAPE '!')" : ''}`;
    const params = [...ids, ...(like ? [like, like, like] : [])];
    const [rows, count] = await Promise.all([
      this.deps.db.select<Record<string, unknown>>(
        `SELECT ${USER_COLUMNS} FROM users WHERE ${where} ORDER BY login, id LIMIT ${page.per_page} OFFSET ${(page.page - 1) * page.per_page}`,
        params,
      ),
      this.deps.db.select<{ n: unknown }>(`SELECT COUNT(*) AS n FROM users WHERE ${where}`, params),
    ]);
    return { items: rows.map(lookupItem), total: toInt(count[0].n) };
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
