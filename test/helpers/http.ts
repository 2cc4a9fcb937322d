// Build the real server on a test context and talk to it with server.inject.
import type { Server } from '@hapi/hapi';
import { afterAll, afterEach, beforeAll } from 'vitest';
import type { Context } from '../../src/context.js';
import { createServer } from '../../src/server.js';
import type { Role } from '../../src/services/users/schemas.js';

export const NS = '/wp-json/svc/v1';

export function basic(login: string, password: string): string {
  return `Basic ${Buffer.from(`${login}:${password}`).toString('base64')}`;
}

export interface Actor {
  id: number;
  login: string;
  password: string;
  authorization: string;
}

let counter = 0;

/** Creates a user with an application password. */
export async function createActor(ctx: Context, role: Role = 'administrator', login = `${role}${++counter}`): Promise<Actor> {
  const user = await ctx.users.create({ login, email: `${login}@example.com`, role, password: 'correct horse battery' });
  const { password } = await ctx.appPasswords.create(user, 'tests');
  return { id: user.id, login, password, authorization: basic(login, password) };
}

export async function testServer(ctx: Context): Promise<Server> {
  const server = await createServer(ctx, { port: 0, host: '127.0.0.1' });
  await server.initialize();
  return server;
}

/**
 * The usual REST test setup: a server and an administrator for the block, `get`/`post` helpers
 * in the namespace, and `check` run after every test (e.g. that the ledger still verifies).
 */
export function adminClient(use: () => { ctx: Context }, check?: (ctx: Context) => Promise<void>) {
  let server: Server;
  let admin: Actor;
  beforeAll(async () => {
    server = await testServer(use().ctx);
    admin = await createActor(use().ctx, 'administrator');
  });
  afterAll(async () => {
    await server.stop();
  });
  if (check) afterEach(() => check(use().ctx));
  return {
    get server() {
      return server;
    },
    get admin() {
      return admin;
    },
    get: (url: string) => server.inject({ url: `${NS}${url}`, headers: { authorization: admin.authorization } }),
    post: (url: string, payload: unknown, headers: Record<string, string> = {}) =>
      server.inject({ method: 'POST', url: `${NS}${url}`, payload: payload as object, headers: { authorization: admin.authorization, ...headers } }),
  };
}
