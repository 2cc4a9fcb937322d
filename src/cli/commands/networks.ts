// `cashtrack networks list|show|save|import-payments|configure|enable|disable|postbacks|postback-secret|health|receivables`: the
// network schemas and services, in-process. Secret settings are read from standard input or an
// environment variable, never from the command line (it ends up in shell history and the process
// list).
import { readFile } from 'node:fs/promises';
import { Option, type Command } from 'commander';
import type { Context } from '../../context.js';
import { ServiceError } from '../../errors.js';
import { dict } from '../../objects.js';
import type { Network } from '../../services/networks/index.js';
import { NETWORK_KINDS, networkSchemas, POSTBACK_MODES, type PostbackMode } from '../../services/networks/schemas.js';
import type { PostbackRecord } from '../../services/postbacks/index.js';
import type { NetworkHealth, StallReason } from '../../services/watchdog/index.js';
import { POSTBACK_ORDERBY, POSTBACK_OUTCOMES } from '../../services/postbacks/schemas.js';
import { printFields, printJson, printTable, readStdin, UsageError, validateInput, withContext, type Io } from '../io.js';
import { collect, commaChoices, json, listCommand, positiveInt, type ListOptions, type ListPage, type Run, type SortOptions } from '../options.js';

export function register(networks: Command, run: Run): void {
  listCommand(
    networks
      .command('list')
      .description('every network and its state, built-in then custom, by id')
      .addOption(new Option('--kind <kind>', 'only built-in or only custom networks').choices(NETWORK_KINDS)),
    {
      items: 'networks',
      perPage: 20,
      row,
      columns: ['id', 'kind', 'name', 'enabled', 'configured', 'postbacks', 'orders', 'advertisers', 'last_sync_at'],
      count: (total) => `${total} network(s)`,
    },
    run,
    list,
  );
  networks
    .command('show <id>')
    .description('one network: settings (secrets only as set or not), cashback, postbacks, sync state')
    .addOption(json())
    .action(run(show));
  networks
    .command('save <id> <file>')
    .description('create or update a custom network from a JSON definition (FILE, or - for standard input)')
    .addOption(json())
    .action(run(save));
  networks
    .command('import-payments <id> <file>')
    .description("import a network's payment report (CSV FILE, or - for standard input) by its definition's payments mapping; prints each line's outcome")
    .addOption(json())
    .action(run(importPayments));
  networks
    .command('configure <id>')
    .description('set settings of a network; secret settings only from standard input or the environment')
    .option('--set <key=value>', 'a non-secret setting (repeatable)', collect)
    .option('--unset <key>', 'remove a setting (repeatable)', collect)
    .option('--secret-stdin <key>', 'read the value of secret setting KEY from standard input')
    .option('--secret-env <key=VAR>', 'take the value of secret setting KEY from environment variable VAR (repeatable)', collect)
    .addOption(json())
    .action(run(configure));
  networks
    .command('health [id]')
    .description("the intake watchdog's view of a network (or of every enabled one): state, why, baseline, last hour, last alarm")
    .addOption(json())
    .action(run(health));
  networks.command('enable <id>').description('switch a network on (sync, polling, tracking links)').addOption(json()).action(run(enable));
  networks.command('disable <id>').description('switch a network off (postbacks have their own switch)').addOption(json()).action(run(disable));
  listCommand(
    networks
      .command('postbacks <id> [state]')
      .description(
        "switch a network's postbacks on or off (STATE; on makes a postback secret if it has none, shown once), or list the postbacks it sent (no STATE)",
      )
      .option('--allow-ip <cidrs>', 'with on/off: accept postbacks only from these addresses or CIDR ranges (comma-separated)')
      .option('--any-ip', 'with on/off: accept postbacks from any address')
      .option('--outcome <list>', 'list: only these outcomes, comma-separated', commaChoices('--outcome', POSTBACK_OUTCOMES))
      .option('--outcome-exclude <list>', 'list: none of these outcomes, comma-separated', commaChoices('--outcome-exclude', POSTBACK_OUTCOMES))
      .option('--test', 'list: only test postbacks')
      .option('--no-test', 'list: only real postbacks')
      .option('--after <time>', 'list: received strictly after this ISO 8601 time')
      .option('--before <time>', 'list: received strictly before this ISO 8601 time')
      .addOption(new Option('--orderby <field>', 'list: sort by (default id; ties by id)').choices(Object.keys(POSTBACK_ORDERBY)))
      .addOption(new Option('--order <dir>', 'list: sort direction (default desc)').choices(['asc', 'desc'])),
    {
      items: 'postbacks',
      perPage: 20,
      row: (r: PostbackRecord) => ({ ...r, test: r.test ? 'test' : '' }),
      columns: ['id', 'received_at', 'ip', 'method', 'outcome', 'code', 'repeat_count', 'transaction_id', 'status', 'order_id', 'test'],
      count: (total) => `${total} postback(s)`,
    },
    run,
    postbacks,
  );
  networks
    .command('postback-secret <id>')
    .description('show whether a network has a postback secret, or make a new one (--rotate): shown once')
    .option('--rotate', 'generate a new secret (the old one stops working)')
    .addOption(new Option('--mode <mode>', 'token (default) or hmac; the mode changes only with a new secret').choices(POSTBACK_MODES))
    .option('--grace-hours <n>', 'keep accepting the old secret for N hours (at most 168)', (v: string) => {
      if (!/^\d+$/.test(v)) throw new UsageError(`--grace-hours expects a whole number of hours, got "${v}"`);
      return Number(v);
    })
    .addOption(json())
    .action(run(postbackSecret));
  networks
    .command('prune-postbacks')
    .description('delete stored postback records older than the retention')
    .option('--days <n>', 'retention in days (default: postbacks.retention_days)', positiveInt)
    .addOption(json())
    .action(run(prunePostbacks));
  networks
    .command('receivables <id>')
    .description('what the network still owes per currency and age, beside what members are owed, and its variances')
    .option('--limit <n>', 'show at most N items of each variance list (1-100, default 20); the counts are complete', positiveInt)
    .addOption(json())
    .action(run(receivables));
}

async function networkId(id: string): Promise<string> {
  return (await validateInput(networkSchemas.networkId, { id })).id;
}

function row(n: Network) {
  return {
    id: n.id,
    kind: n.kind,
    name: n.name,
    enabled: n.enabled ? 'yes' : 'no',
    configured: n.configured ? 'yes' : 'no',
    postbacks: n.postbacks.enabled ? `on (${n.postbacks.mode})` : 'off',
    orders: n.counts.orders,
    advertisers: n.counts.advertisers,
    last_sync_at: n.last_sync_at ?? '',
  };
}

export async function list(io: Io, opts: ListOptions & { kind?: (typeof NETWORK_KINDS)[number] }): Promise<ListPage<Network>> {
  return withContext(io, async (ctx) => {
    const query = await validateInput(networkSchemas.list, { kind: opts.kind, page: opts.page, per_page: opts.perPage });
    return { ...(await ctx.networks.listPage(query)), page: query.page };
  });
}

function printNetwork(io: Io, n: Network): void {
  const lines: [string, unknown][] = [
    ['network', `${n.id} (${n.kind}): ${n.name}, ${n.currency}`],
    ['enabled', n.enabled ? 'yes' : 'no'],
    [
      'configured',
      n.configured
        ? 'yes'
        : `no (settings: ${n.config_keys
            .filter((k) => k.required)
            .map((k) => k.name)
            .join(', ')})`,
    ],
    ...Object.entries(n.settings).map(([k, v]): [string, unknown] => [`  ${k}`, typeof v === 'boolean' ? (v ? 'yes' : 'no') : v]),
    [
      'cashback',
      `${n.cashback_rule.type} ${n.cashback_rule.value}${n.cashback_rule.currency ? ` ${n.cashback_rule.currency}` : ''} (${n.cashback_rule.source})`,
    ],
    [
      'postbacks',
      `${n.postbacks.enabled ? 'on' : 'off'}, ${n.postbacks.mode}, secret ${n.postbacks.secret_set ? `set ${n.postbacks.secret_set_at}` : 'not set'}`,
    ],
    ['  allowlist', n.postbacks.ip_allowlist.length ? n.postbacks.ip_allowlist.join(', ') : 'any address'],
    ['  url', n.postbacks.url ?? '(set CASHTRACK_PUBLIC_URL)'],
    ['  template', n.postbacks.template],
    ['last sync', n.last_sync_at ? `${n.last_sync_at} ${JSON.stringify(n.last_sync_result)}` : 'never'],
    ['last error', n.last_error ? `${n.last_error_at} ${n.last_error}` : null],
    ['counts', `${n.counts.orders} order(s), ${n.counts.advertisers} advertiser(s)`],
  ];
  for (const [k, v] of lines) if (v !== null && v !== undefined && v !== '') io.stdout.write(`${`${k} `.padEnd(13)}${String(v)}\n`);
}

export async function show(io: Io, id: string, opts: { json?: boolean }): Promise<void> {
  await withContext(io, async (ctx) => {
    const n = await ctx.networks.get(await networkId(id));
    if (opts.json) return printJson(io, n);
    printNetwork(io, n);
  });
}

export async function save(io: Io, id: string, file: string, opts: { json?: boolean }): Promise<void> {
  let text: string;
  try {
    text = file === '-' ? await readStdin(io) : await readFile(file, 'utf8');
  } catch (err) {
    throw new ServiceError('svc_file_unreadable', `Cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`, 400);
  }
  let definition: unknown;
  try {
    definition = JSON.parse(text);
  } catch {
    throw new ServiceError('svc_invalid_network', `${file === '-' ? 'Standard input' : file} is not valid JSON.`, 400);
  }
  await withContext(io, async (ctx) => {
    const { network, created } = await ctx.networks.saveCustom(await networkId(id), definition, 'cli');
    if (opts.json) return printJson(io, network);
    io.stdout.write(`custom network ${network.id} ${created ? 'created' : 'updated'}\n`);
  });
}

/** `networks import-payments`: POST /networks/{id}/payments/import, in-process. */
export async function importPayments(io: Io, id: string, file: string, opts: { json?: boolean }): Promise<void> {
  let text: string;
  try {
    text = file === '-' ? await readStdin(io) : await readFile(file, 'utf8');
  } catch (err) {
    throw new ServiceError('svc_file_unreadable', `Cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`, 400);
  }
  await withContext(io, async (ctx) => {
    const summary = await ctx.orders.importPayments(await networkId(id), text, 'cli');
    if (opts.json) return printJson(io, summary);
    for (const r of summary.results)
      if (r.result !== 'recorded' && r.result !== 'already')
        io.stdout.write(`line ${r.line}: ${r.result} ${r.transaction_id} ${r.payment_id}${r.error ? ` (${r.error.code}: ${r.error.message})` : ''}\n`);
    io.stdout.write(
      `${summary.recorded} recorded, ${summary.already} already on file, ${summary.unknown} unknown, ${summary.conflict} conflict(s), ${summary.invalid} invalid; ${summary.released} cashback released\n`,
    );
  });
}

function pairs(values: string[], option: string): [string, string][] {
  return values.map((v) => {
    const eq = v.indexOf('=');
    if (eq < 1) throw new UsageError(`${option} expects key=value, got "${v.slice(0, 64)}"`);
    return [v.slice(0, eq), v.slice(eq + 1)];
  });
}

export async function configure(
  io: Io,
  id: string,
  opts: { set?: string[]; unset?: string[]; secretStdin?: string; secretEnv?: string[]; json?: boolean },
): Promise<void> {
  // Keys typed by the operator: `--set __proto__=x` is a (refused) setting name, nothing more.
  const values = dict<string | null>();
  for (const [k, v] of pairs(opts.set ?? [], '--set')) values[k] = v;
  for (const k of opts.unset ?? []) values[k] = null;
  for (const [k, name] of pairs(opts.secretEnv ?? [], '--secret-env')) {
    const v = io.env[name];
    if (v === undefined || v === '') throw new UsageError(`--secret-env ${k}=${name}: the environment variable ${name} is not set`);
    values[k] = v;
  }
  if (opts.secretStdin) {
    const v = (await readStdin(io)).replace(/\r?\n$/, '');
    if (!v) throw new UsageError(`--secret-stdin ${opts.secretStdin}: standard input is empty`);
    values[opts.secretStdin] = v;
  }
  if (Object.keys(values).length === 0)
    throw new UsageError('nothing to configure: give --set key=value, --unset key, --secret-stdin key or --secret-env key=VAR');
  await withContext(io, async (ctx) => {
    const current = await ctx.networks.get(await networkId(id));
    const secret = new Set(current.config_keys.filter((k) => k.secret).map((k) => k.name));
    for (const [k] of pairs(opts.set ?? [], '--set')) {
      if (secret.has(k)) throw new UsageError(`${k} is a secret: pass it with --secret-stdin ${k} or --secret-env ${k}=VAR, never on the command line`);
    }
    const n = await ctx.networks.configure(current.id, values, 'cli');
    if (opts.json) return printJson(io, n);
    io.stdout.write(`network ${n.id} configured (${Object.keys(values).join(', ')}); ${n.configured ? 'ready' : 'still missing required settings'}\n`);
  });
}

export async function enable(io: Io, id: string, opts: { json?: boolean }): Promise<void> {
  await switchNetwork(io, id, true, opts);
}

export async function disable(io: Io, id: string, opts: { json?: boolean }): Promise<void> {
  await switchNetwork(io, id, false, opts);
}

async function switchNetwork(io: Io, id: string, on: boolean, opts: { json?: boolean }): Promise<void> {
  await withContext(io, async (ctx) => {
    const n = on ? await ctx.networks.enable(await networkId(id), 'cli') : await ctx.networks.disable(await networkId(id), 'cli');
    if (opts.json) return printJson(io, n);
    io.stdout.write(`network ${n.id} ${on ? 'enabled' : 'disabled'}\n`);
  });
}

interface PostbacksOptions extends ListOptions, SortOptions {
  allowIp?: string;
  anyIp?: boolean;
  outcome?: string;
  outcomeExclude?: string;
  test?: boolean;
  after?: string;
  before?: string;
}

/** `postbacks ID on|off [--allow-ip CIDRS | --any-ip]` switches (and prints the switch); `postbacks ID` lists what arrived. */
export async function postbacks(io: Io, id: string, state: string | undefined, opts: PostbacksOptions): Promise<ListPage<PostbackRecord> | null> {
  if (state !== undefined && state !== 'on' && state !== 'off') throw new UsageError(`expected on or off, got "${state.slice(0, 16)}"`);
  if ((opts.allowIp !== undefined || opts.anyIp) && state === undefined) throw new UsageError('--allow-ip and --any-ip go with on or off');
  if (opts.allowIp !== undefined && opts.anyIp) throw new UsageError('--allow-ip and --any-ip exclude each other');
  return withContext(io, async (ctx) => {
    const network = await networkId(id);
    if (state !== undefined) {
      const allowlist = opts.anyIp
        ? null
        : opts.allowIp === undefined
          ? undefined
          : opts.allowIp
              .split(',')
              .map((s) => s.trim())
              .filter(Boolean);
      // One step, as POST /networks/{id}/postback: a network without a secret gets one, shown once.
      const done = await ctx.networks.switchPostbacks(network, state === 'on', 'cli', { ip_allowlist: allowlist });
      if (opts.json) printJson(io, done);
      else {
        const n = done.network;
        io.stdout.write(
          `postbacks ${state} for ${n.id}${n.postbacks.ip_allowlist.length ? ` from ${n.postbacks.ip_allowlist.join(', ')}` : ' from any address'}\n`,
        );
        if (done.secret !== null) printNewSecret(io, n, done.secret, n.postbacks.mode);
        if (done.message) io.stderr.write(`note: ${done.message}\n`);
      }
      return null;
    }
    const filters = await validateInput(networkSchemas.postbacks, {
      outcome: opts.outcome,
      outcome_exclude: opts.outcomeExclude,
      test: opts.test,
      after: opts.after,
      before: opts.before,
      orderby: opts.orderby,
      order: opts.order,
      page: opts.page,
      per_page: opts.perPage,
    });
    return { ...(await ctx.postbacks.list({ ...filters, network })), page: filters.page };
  });
}

export async function postbackSecret(io: Io, id: string, opts: { rotate?: boolean; mode?: PostbackMode; graceHours?: number; json?: boolean }): Promise<void> {
  await withContext(io, async (ctx: Context) => {
    const network = await networkId(id);
    if (!opts.rotate) {
      const n = await ctx.networks.get(network);
      if (opts.json) return printJson(io, n.postbacks);
      io.stdout.write(
        `${n.id}: ${n.postbacks.mode} mode, secret ${n.postbacks.secret_set ? `set ${n.postbacks.secret_set_at}` : 'not set'} (run with --rotate for a new one)\n`,
      );
      return;
    }
    const { network: n, secret, mode } = await ctx.networks.rotatePostbackSecret(network, 'cli', { mode: opts.mode, grace_hours: opts.graceHours });
    if (opts.json) return printJson(io, { network: n.id, mode, secret, previous_secret_until: n.postbacks.previous_secret_until });
    printNewSecret(io, n, secret, mode);
    io.stdout.write(
      n.postbacks.previous_secret_until ? `the previous secret works until ${n.postbacks.previous_secret_until}\n` : 'the previous secret no longer works\n',
    );
  });
}

/** A postback secret just made, once, with what to give the network. */
function printNewSecret(io: Io, n: Network, secret: string, mode: PostbackMode): void {
  const url = n.postbacks.url ?? `<public URL>/postback/${n.id}`;
  io.stdout.write(`new postback secret for ${n.id} (${mode} mode), shown once:\n\n  ${secret}\n\n`);
  if (mode === 'token')
    io.stdout.write(
      `give the network: ${url}?token=${secret}${n.postbacks.template ? `&${n.postbacks.template}` : ''}\n  (or send it in the X-Postback-Token header)\n`,
    );
  else
    io.stdout.write(`the sender signs each request: X-Postback-Signature: t=<unix time>,v1=<hex HMAC-SHA256 of "<t>.<raw query or body>" with this secret>\n`);
}

export async function prunePostbacks(io: Io, opts: { days?: number; json?: boolean }): Promise<void> {
  await withContext(io, async (ctx) => {
    const days = opts.days ?? ctx.config.postbacks.retention_days;
    const deleted = await ctx.postbacks.prune(days);
    if (opts.json) return printJson(io, { deleted, retention_days: days });
    io.stdout.write(`deleted ${deleted} postback record(s) older than ${days} day(s)\n`);
  });
}

function reasonText(r: StallReason): string {
  if (r.kind === 'intake_low') return `intake ${r.observed} in ${r.window_minutes} min, ${r.expected} expected`;
  if (r.kind === 'run_overdue') return `${r.run} run not succeeded since ${r.last_ok_at} (allowed ${r.allowed_minutes} min)`;
  return `${r.run}: credentials refused ${r.failures} time(s) in a row`;
}

function printHealth(io: Io, h: NetworkHealth): void {
  const lines: [string, unknown][] = [
    ['network', h.network],
    ['state', h.state],
    ['reasons', h.reasons.map(reasonText).join('; ')],
    ['stalled since', h.stalled_since],
    ['checked at', h.checked_at ?? 'not yet'],
    [
      'baseline',
      `${h.baseline.expected_this_hour} expected this hour; ${h.baseline.events} event(s) over ${h.baseline.span_days} day(s)${h.enough_history ? '' : ` (not enough history: ${h.baseline.min_history_days} days and ${h.baseline.min_history_events} events needed)`}`,
    ],
    ['last hour', `${h.last_hour.observed} received, ${h.last_hour.expected} expected`],
    ['window', `${h.window.observed} received in ${h.window.minutes} min, ${h.window.expected} expected`],
    ...h.runs.map((r): [string, unknown] => [
      `${r.run} run`,
      `last ok ${r.ok_at ?? 'never'}${r.auth_failures ? `, ${r.auth_failures} refused login(s) in a row` : ''}`,
    ]),
    ['last alarm', h.last_alarm ? `${h.last_alarm.at} ${h.last_alarm.reasons.map(reasonText).join('; ')}` : null],
    ['recovered at', h.recovered_at],
  ];
  printFields(io, lines, 15);
}

export async function health(io: Io, id: string | undefined, opts: { json?: boolean }): Promise<void> {
  const one = id === undefined ? null : await networkId(id);
  await withContext(io, async (ctx) => {
    if (one !== null) {
      const h = await ctx.watchdog.health(one);
      if (opts.json) return printJson(io, h);
      return printHealth(io, h);
    }
    const all = await ctx.watchdog.healthAll();
    if (opts.json) return printJson(io, all);
    printTable(
      io,
      all.map((h) => ({
        network: h.network,
        state: h.state,
        reasons: h.reasons.map((r) => r.kind).join(','),
        this_hour: h.baseline.expected_this_hour,
        last_hour: h.last_hour.observed,
        last_alarm: h.last_alarm?.at ?? '',
      })),
      ['network', 'state', 'reasons', 'this_hour', 'last_hour', 'last_alarm'],
    );
  });
}

export async function receivables(io: Io, id: string, opts: { limit?: number; json?: boolean }): Promise<void> {
  await withContext(io, async (ctx) => {
    const network = await networkId(id);
    const query = await validateInput(networkSchemas.receivables, { limit: opts.limit });
    const r = await ctx.receivables.forNetwork(network, { limit: query.limit });
    if (opts.json) return printJson(io, r);
    const out = (s: string) => io.stdout.write(`${s}\n`);
    out(`${r.network}: payment terms: ${r.payment_terms_days} days (at ${r.generated_at})`);
    out('');
    out('unpaid approved commission by age in days, beside what members are owed:');
    printTable(
      io,
      r.currencies.map(
        (c): Record<string, string | number> => ({
          currency: c.currency,
          unpaid: c.unpaid.count,
          commission: c.unpaid.commission,
          ...Object.fromEntries(c.buckets.map((b) => [b.bucket, b.commission])),
          overdue: c.overdue.commission,
          paid: c.paid.commission,
          members_owed: c.liabilities?.owed ?? '',
        }),
      ),
      ['currency', 'unpaid', 'commission', '0-30', '31-60', '61-90', 'over_90', 'overdue', 'paid', 'members_owed'],
    );
    const shown = (v: { count: number; items: unknown[] }) => (v.items.length < v.count ? ` (first ${v.items.length})` : '');
    out('');
    out(`mismatched payments: ${r.variances.mismatched.count}${shown(r.variances.mismatched)}`);
    if (r.variances.mismatched.count)
      printTable(io, r.variances.mismatched.items, ['order_id', 'transaction_id', 'status', 'currency', 'commission', 'paid_currency', 'paid', 'difference']);
    out(`payments for unknown transactions: ${r.variances.unknown.count}${shown(r.variances.unknown)}`);
    if (r.variances.unknown.count)
      printTable(
        io,
        r.variances.unknown.items.map((u) => ({ ...u, amount: u.amount ?? (u.amount_minor === null ? '' : `${u.amount_minor} (minor units)`) })),
        ['payment_id', 'transaction_id', 'amount', 'currency', 'paid_at', 'source'],
      );
    out(`unpaid past the terms: ${r.variances.overdue.count}${shown(r.variances.overdue)}`);
    if (r.variances.overdue.count)
      printTable(io, r.variances.overdue.items, ['order_id', 'transaction_id', 'currency', 'commission', 'approved_at', 'age_days']);
  });
}
