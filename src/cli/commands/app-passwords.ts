// `cashtrack app-passwords create|list|revoke`.
import type { Command } from 'commander';
import { printJson, printTable, withContext, type Io } from '../io.js';
import { json, type Run } from '../options.js';

export function register(ap: Command, run: Run): void {
  ap.command('create <login>')
    .description('create one; the password is shown once')
    .requiredOption('--name <name>', 'application name (unique per user)')
    .addOption(json())
    .action(run(create));
  ap.command('list <login>').description("list a user's application passwords").addOption(json()).action(run(list));
  ap.command('revoke <login> <uuid>').description('revoke one (takes effect on the next request)').addOption(json()).action(run(revoke));
}

export async function create(io: Io, login: string, opts: { name: string; json?: boolean }): Promise<void> {
  await withContext(io, async (ctx) => {
    const user = await ctx.users.requireByLogin(login);
    const created = await ctx.appPasswords.create(user, opts.name, 'cli');
    if (opts.json) return printJson(io, created);
    io.stdout.write(
      `application password "${created.name}" for ${user.login} (uuid ${created.uuid}):\n\n  ${created.password}\n\nIt is shown once; store it now.\n`,
    );
  });
}

export async function list(io: Io, login: string, opts: { json?: boolean }): Promise<void> {
  await withContext(io, async (ctx) => {
    const user = await ctx.users.requireByLogin(login);
    const items = await ctx.appPasswords.list(user);
    if (opts.json) return printJson(io, items);
    printTable(io, items, ['uuid', 'name', 'created', 'last_used', 'last_ip']);
  });
}

export async function revoke(io: Io, login: string, uuid: string, opts: { json?: boolean }): Promise<void> {
  await withContext(io, async (ctx) => {
    const user = await ctx.users.requireByLogin(login);
    await ctx.appPasswords.revoke(user, uuid, 'cli');
    if (opts.json) return printJson(io, { revoked: true, uuid });
    io.stdout.write(`revoked ${uuid}\n`);
  });
}
