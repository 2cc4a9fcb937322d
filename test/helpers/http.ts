// Build the real server on a test context and talk to it with server.inject.
import type { Server } from '@hapi/hapi';
import type { Context } from '../../src/context.js';
import { createServer } from '../../src/server.js';
import type { Role } from '../../src/services/users.js';

export const NS = '/wp-json/svc/v1';

export function basic(login: string, password: string): string {
  return 'Basic ' + Buffer.from(`${login}:${password}`).toString('base64');
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
