// `cashtrack ai shop|coupon|bulk|configure`: AI content through the AI schemas and service,
// in-process. `bulk` enqueues an `ai.bulk` job and runs it here to the end with a progress line.
// The API key is read from standard input or an environment variable, never from the command
// line (it would end up in shell history and the process list), and never printed.
import { Option, type Command } from 'commander';
import { AI_BULK_KINDS, aiSchemas } from '../../services/ai/schemas.js';
import { COUPON_TYPES } from '../../services/coupons/schemas.js';
import { dict } from '../../objects.js';
import { terminalLine, terminalText } from '../../terminal-text.js';
import type { AiBudgetDay, AiSettingsView, GenerationUsage } from '../../services/ai/index.js';
import { printJson, readStdin, UsageError, validateInput, withContext, type Io } from '../io.js';
import { collect, json, type Run } from '../options.js';
import { jobProgressLine } from '../progress.js';
import { runInProcess } from '../run-job.js';

export function register(ai: Command, run: Run): void {
  ai.command('shop <id>')
    .description("generate an advertiser's description and page body (ID: the advertiser's number, see advertisers show)")
    .option('--dry-run', 'print the proposal without saving it (stored for a day: keep it with --keep)')
    .option('--keep <proposal>', "save a dry run's proposal as it is, without asking the provider again")
    .addOption(json())
    .action(run(shop));
  ai.command('coupon <id>')
    .description("rewrite a coupon's title and description (the original is kept: coupons revert ID)")
    .option('--dry-run', 'print the proposal without saving it (stored for a day: keep it with --keep)')
    .option('--keep <proposal>', "save a dry run's proposal as it is, without asking the provider again")
    .addOption(json())
    .action(run(coupon));
  ai.command('bulk')
    .description('generate for every shop or coupon of a filter as an ai.bulk job, run here with a progress line')
    .addOption(new Option('--kind <kind>', 'what to write').choices(AI_BULK_KINDS).makeOptionMandatory())
    .option('--network <id>', 'only this network')
    .option('--status <status>', 'only this status (shops: active, inactive; coupons: active, scheduled, expired, removed)')
    .option('--advertiser <id>', "coupons: only this advertiser (the network's id)")
    .addOption(new Option('--type <type>', 'coupons: with a code, or deals').choices(COUPON_TYPES))
    .option('--search <prefix>', 'shops: prefix of the name')
    .option('--overwrite', 'also items whose text the AI already wrote')
    .option('--no-progress', 'no progress line on a terminal')
    .addOption(json())
    .action(run(bulk));
  ai.command('configure')
    .description('show the provider settings, or store some; the API key only from standard input or the environment')
    .option(
      '--set <key=value>',
      'a setting: base_url, model, temperature, timeout_ms, concurrency, token_budget, daily_token_budget, answer_token_estimate, language, prompts.<shop|coupon>.<system|user> (repeatable)',
      collect,
    )
    .option('--unset <key>', 'give a setting back to the configuration (repeatable; api_key removes the stored key)', collect)
    .option('--api-key-stdin', 'read the API key from standard input')
    .option('--api-key-env <VAR>', 'take the API key from environment variable VAR')
    .addOption(json())
    .action(run(configure));
}

const usageLine = (g: GenerationUsage) =>
  `${terminalLine(g.model)}: ${g.tokens.prompt_tokens} prompt + ${g.tokens.completion_tokens} completion = ${g.tokens.total_tokens} tokens, ${g.attempts} attempt(s), ${g.duration_ms} ms`;

/** The generate options from --dry-run and --keep. */
const generateInput = (opts: { dryRun?: boolean; keep?: string }) =>
  validateInput(aiSchemas.generate, { dry_run: opts.dryRun ?? false, ...(opts.keep !== undefined ? { proposal_id: opts.keep } : {}) });

/** The line that tells how to keep a dry run's proposal. */
const keepLine = (kind: 'shop' | 'coupon', out: { id: number; proposal_id: string | null; expires_at: string | null }) =>
  out.proposal_id && out.expires_at ? `keep it until ${out.expires_at}: cashtrack ai ${kind} ${out.id} --keep ${out.proposal_id}\n` : '';

export async function shop(io: Io, id: string, opts: { dryRun?: boolean; keep?: string; json?: boolean }): Promise<void> {
  const params = await validateInput(aiSchemas.itemId, { id });
  const input = await generateInput(opts);
  await withContext(io, async (ctx) => {
    const out = await ctx.ai.generateShop(params.id, input, 'cli');
    if (opts.json) return printJson(io, out);
    io.stdout.write(
      `${out.dry_run ? 'proposal (not saved)' : `saved${out.page_id ? ` (page ${out.page_id}; undo: cashtrack pages revert ${out.page_id})` : ''}`} for advertiser ${out.id}\n`,
    );
    // Each part cleaned on its own (the gate would clean the whole): an escape opened in one part cannot hide the next.
    io.stdout.write(`description  ${terminalLine(out.proposal.description)}\n\n${terminalText(out.proposal.body)}\n\n${usageLine(out.generation)}\n`);
    io.stdout.write(keepLine('shop', out));
  });
}

export async function coupon(io: Io, id: string, opts: { dryRun?: boolean; keep?: string; json?: boolean }): Promise<void> {
  const params = await validateInput(aiSchemas.itemId, { id });
  const input = await generateInput(opts);
  await withContext(io, async (ctx) => {
    const out = await ctx.ai.rewriteCoupon(params.id, input, 'cli');
    if (opts.json) return printJson(io, out);
    io.stdout.write(`${out.dry_run ? 'proposal (not saved)' : `saved (undo: cashtrack coupons revert ${out.id})`} for coupon ${out.id}\n`);
    io.stdout.write(`title        ${terminalLine(out.proposal.title)}\ndescription  ${terminalLine(out.proposal.description)}\n${usageLine(out.generation)}\n`);
    io.stdout.write(keepLine('coupon', out));
  });
}

interface BulkOptions {
  kind: string;
  network?: string;
  status?: string;
  advertiser?: string;
  type?: string;
  search?: string;
  overwrite?: boolean;
  progress?: boolean;
  json?: boolean;
}

export async function bulk(io: Io, opts: BulkOptions): Promise<void> {
  const filter = Object.fromEntries(
    Object.entries({ network: opts.network, status: opts.status, advertiser: opts.advertiser, type: opts.type, search: opts.search }).filter(
      ([, v]) => v !== undefined,
    ),
  );
  const input = await validateInput(aiSchemas.bulk, { kind: opts.kind, filter, overwrite: opts.overwrite ?? false });
  await withContext(io, async (ctx) => {
    const queued = await ctx.ai.startBulk(input, 'cli');
    if (!opts.json) io.stdout.write(`job ${queued.id} ai.bulk started\n`);
    const job = await runInProcess(ctx, queued, jobProgressLine(io, opts));
    if (opts.json) return printJson(io, job);
    const r = (job.result ?? {}) as {
      saved?: number;
      skipped?: number;
      failed?: number;
      stopped?: string | null;
      failures?: { id: number; code: string; message: string }[];
      usage?: { calls: number; tokens: { total_tokens: number }; models: string[] };
    };
    io.stdout.write(
      `${r.saved ?? 0} saved, ${r.skipped ?? 0} skipped (AI-written), ${r.failed ?? 0} failed; ${r.usage?.calls ?? 0} call(s), ${r.usage?.tokens.total_tokens ?? 0} tokens (${(r.usage?.models ?? []).join(', ') || 'no model'})\n`,
    );
    if (r.stopped === 'token_budget') io.stdout.write('stopped at the token budget (ai.token_budget): run it again to go on\n');
    if (r.stopped === 'daily_token_budget') io.stdout.write("stopped at today's token budget (ai.daily_token_budget): it resets at 00:00 UTC\n");
    for (const f of r.failures ?? []) io.stderr.write(`${input.kind === 'shops' ? 'advertiser' : 'coupon'} ${f.id}: ${f.code}: ${f.message}\n`);
  });
}

function printSettings(io: Io, s: AiSettingsView & { today: AiBudgetDay }): void {
  const rows: [string, unknown][] = [
    ['configured', s.configured ? 'yes' : `no (set ${s.missing.join(', ')})`],
    ['base_url', s.base_url],
    ['api_key', s.api_key_set ? 'set' : 'not set'],
    ['model', s.model],
    ['temperature', s.temperature],
    ['timeout_ms', s.timeout_ms],
    ['concurrency', s.concurrency],
    ['token_budget', s.token_budget || 'no limit'],
    ['daily_token_budget', s.daily_token_budget || 'no limit'],
    ['answer_token_estimate', s.answer_token_estimate],
    [
      'spent_today',
      `${s.today.spent} tokens (${s.today.day} UTC), ${s.today.reserved} reserved, ${s.today.remaining === null ? 'no daily limit' : `${s.today.remaining} left`}`,
    ],
    ['language', s.language],
    ['stored', s.stored.join(', ') || '(none: all from the configuration)'],
  ];
  for (const [k, v] of rows) io.stdout.write(`${k.padEnd(22)}${v === null || v === undefined ? '' : String(v)}\n`);
  for (const task of ['shop', 'coupon'] as const) {
    io.stdout.write(
      `prompts.${task}.system  ${s.prompts[task].system.replace(/\n/g, '\n  ')}\nprompts.${task}.user    ${s.prompts[task].user.replace(/\n/g, '\n  ')}\n`,
    );
  }
}

export async function configure(io: Io, opts: { set?: string[]; unset?: string[]; apiKeyStdin?: boolean; apiKeyEnv?: string; json?: boolean }): Promise<void> {
  // Keys typed by the operator: `--set __proto__=x` is a (refused) setting name, nothing more.
  const values = dict<string | null>();
  for (const pair of opts.set ?? []) {
    const eq = pair.indexOf('=');
    if (eq < 1) throw new UsageError(`--set expects key=value, got "${pair.slice(0, 64)}"`);
    const key = pair.slice(0, eq);
    if (key === 'api_key') throw new UsageError('api_key is a secret: pass it with --api-key-stdin or --api-key-env VAR, never on the command line');
    values[key] = pair.slice(eq + 1);
  }
  for (const key of opts.unset ?? []) values[key] = null;
  if (opts.apiKeyStdin && opts.apiKeyEnv) throw new UsageError('give --api-key-stdin or --api-key-env, not both');
  if (opts.apiKeyEnv) {
    const v = io.env[opts.apiKeyEnv];
    if (v === undefined || v === '') throw new UsageError(`--api-key-env ${opts.apiKeyEnv}: the environment variable is not set`);
    values.api_key = v;
  }
  if (opts.apiKeyStdin) {
    const v = (await readStdin(io)).replace(/\r?\n$/, '');
    if (!v) throw new UsageError('--api-key-stdin: standard input is empty');
    values.api_key = v;
  }
  await withContext(io, async (ctx) => {
    const view = Object.keys(values).length ? await ctx.ai.configure(values, 'cli') : await ctx.ai.settings();
    if (opts.json) return printJson(io, view);
    if (Object.keys(values).length)
      io.stdout.write(
        `AI provider configured (${Object.keys(values).join(', ')}); ${view.configured ? 'ready' : `still missing ${view.missing.join(', ')}`}\n`,
      );
    else printSettings(io, view);
  });
}
