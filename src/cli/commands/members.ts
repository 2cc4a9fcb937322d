// `cashtrack members export|erase`: a member's data requests, on the same service as the routes.
import { createWriteStream } from 'node:fs';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Command } from 'commander';
import { ServiceError } from '../../errors.js';
import { privateFile } from '../../private-files.js';
import { memberSchemas } from '../../services/members/schemas.js';
import { memberId, printJson, UsageError, validateInput, withContext, type Io } from '../io.js';
import { json, type Run } from '../options.js';

export function register(members: Command, run: Run): void {
  members
    .command('export <member>')
    .description('everything held about a member (id, login or email) as one JSON document, to standard output or --out')
    .option('--out <file>', 'write the document to this file (created owner-only, 0600)')
    .addOption(json())
    .action(run(exportData));
  members
    .command('erase <member>')
    .description('anonymise a member (login, email, name, payout details, click addresses, sessions, application passwords), keeping every amount')
    .option('--yes', 'confirm')
    .option('--force', 'also with a positive balance (written off) or pending payouts (cancelled); needs --note')
    .option('--note <text>', 'why (required with --force)')
    .addOption(json())
    .action(run(erase));
}

export async function exportData(io: Io, member: string, opts: { out?: string; json?: boolean }): Promise<void> {
  await withContext(io, async (ctx) => {
    const id = await memberId(ctx, member);
    const parts = await ctx.members.exportDocument(id, 'cli');
    if (!opts.out) {
      // JSON escapes every control character, so the terminal gate changes nothing in it.
      for await (const part of parts) io.stdout.write(part);
      return;
    }
    let bytes = 0;
    const counted = Readable.from(
      (async function* () {
        for await (const part of parts) {
          bytes += Buffer.byteLength(part);
          yield part;
        }
      })(),
    );
    try {
      privateFile(opts.out);
      await pipeline(counted, createWriteStream(opts.out, { mode: 0o600 }));
    } catch (err) {
      if (err instanceof ServiceError) throw err;
      throw new ServiceError('svc_file_unwritable', `Cannot write ${opts.out}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`, 400);
    }
    if (opts.json) return printJson(io, { member_id: id, file: opts.out, bytes });
    io.stdout.write(`member ${id}: data written to ${opts.out} (${bytes} bytes)\n`);
  });
}

export async function erase(io: Io, member: string, opts: { yes?: boolean; force?: boolean; note?: string; json?: boolean }): Promise<void> {
  await withContext(io, async (ctx) => {
    const id = await memberId(ctx, member);
    if (!opts.yes) throw new UsageError(`erasing member ${id} replaces their login, email and name for good: add --yes to confirm`);
    const input = await validateInput(memberSchemas.erase, { force: opts.force, note: opts.note });
    const result = await ctx.members.erase(id, input, 'cli');
    if (opts.json) return printJson(io, result);
    io.stdout.write(`member ${id} erased at ${result.erased_at} (now ${result.member.login})\n`);
    for (const p of result.payouts_cancelled) io.stdout.write(`  payout ${p} cancelled\n`);
    for (const e of result.written_off) io.stdout.write(`  ${e.amount} ${e.currency} written off (entry ${e.id})\n`);
  });
}
