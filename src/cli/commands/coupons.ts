// `cashtrack coupons list|show|update|revert|link|refresh`: the REST routes' schemas and the
// coupon service, in-process. `refresh` enqueues a `coupons.refresh` job and runs it here to the
// end, with a progress line (count, percent, estimate) on a terminal.
import { couponSchemas, type CouponEdit } from '../../services/coupons/schemas.js';
import type { Coupon, CouponDetail } from '../../services/coupons/index.js';
import { printJson, printTable, validateInput, withContext, type Io } from '../io.js';
import { jobProgressLine } from '../progress.js';
import { runInProcess } from './jobs.js';

const discountText = (c: Coupon) =>
  c.discount.text ?? (c.discount.value ? `${c.discount.value}${c.discount.type === 'percent' ? '%' : c.discount.currency ? ` ${c.discount.currency}` : ''}` : c.discount.type === 'free_shipping' ? 'free shipping' : '');

function printCoupon(io: Io, c: CouponDetail): void {
  const rows: [string, unknown][] = [
    ['id', c.id],
    ['network', `${c.network} (advertiser ${c.advertiser}${c.advertiser_name ? `, ${c.advertiser_name}` : ''})`],
    ['coupon', c.coupon_id],
    ['status', c.status],
    ['type', c.type],
    ['code', c.code],
    ['title', c.title],
    ['description', c.description],
    ['terms', c.terms],
    ['discount', `${c.discount.type}${discountText(c) ? `: ${discountText(c)}` : ''}`],
    ['landing', c.landing_url],
    ['starts', c.starts_at],
    ['ends', c.ends_at],
    ['exclusive', c.exclusive ? 'yes' : null],
    ['regions', c.regions.join(', ')],
    ['edited', c.edited_fields.join(', ')],
    ['ai', c.ai_fields.join(', ')],
    ['original', c.original ? JSON.stringify(c.original) : null],
    ['updated', c.updated_at],
    ['removed', c.removed_at],
  ];
  for (const [k, v] of rows) if (v !== null && v !== undefined && v !== '') io.stdout.write(`${k.padEnd(12)}${String(v)}\n`);
}

type ListOptions = {
  network?: string; advertiser?: string; status?: string; type?: string; search?: string; expiresBefore?: string; ai?: boolean; edited?: boolean;
  orderby?: string; order?: string; page: number; perPage: number; json?: boolean;
};

export async function list(io: Io, opts: ListOptions): Promise<void> {
  const query = await validateInput(couponSchemas.list, {
    network: opts.network, advertiser: opts.advertiser, status: opts.status, type: opts.type, search: opts.search, expires_before: opts.expiresBefore,
    ai: opts.ai, edited: opts.edited, orderby: opts.orderby, order: opts.order, page: opts.page, per_page: opts.perPage,
  });
  await withContext(io, async (ctx) => {
    const { items, total } = await ctx.coupons.list(query);
    if (opts.json) return printJson(io, items);
    printTable(io, items.map((c) => ({ ...c, discount: discountText(c), title: c.title.length > 50 ? `${c.title.slice(0, 49)}…` : c.title })), ['id', 'network', 'advertiser', 'status', 'code', 'title', 'discount', 'ends_at']);
    io.stdout.write(`${total} coupon(s)${total > items.length ? `, page ${query.page}` : ''}\n`);
  });
}

export async function show(io: Io, id: string, opts: { json?: boolean }): Promise<void> {
  const key = await validateInput(couponSchemas.id, { id });
  await withContext(io, async (ctx) => {
    const c = await ctx.coupons.get(key.id);
    if (opts.json) return printJson(io, c);
    printCoupon(io, c);
  });
}

type UpdateOptions = {
  code?: string; title?: string; description?: string; terms?: string; discountType?: string; discountValue?: string; discountCurrency?: string; discountText?: string;
  landingUrl?: string; startsAt?: string; endsAt?: string; exclusive?: boolean; regions?: string; reset?: string[]; json?: boolean;
};

/** "none" clears a field that can be empty. */
const orNull = (v: string | undefined) => (v === undefined ? undefined : v === 'none' ? null : v);

export async function update(io: Io, id: string, opts: UpdateOptions): Promise<void> {
  const key = await validateInput(couponSchemas.id, { id });
  const edit: CouponEdit = await validateInput(couponSchemas.edit, {
    code: opts.code, title: opts.title, description: opts.description, terms: opts.terms, discount_type: opts.discountType,
    discount_value: orNull(opts.discountValue), discount_currency: orNull(opts.discountCurrency), discount_text: opts.discountText,
    landing_url: orNull(opts.landingUrl), starts_at: orNull(opts.startsAt), ends_at: orNull(opts.endsAt), exclusive: opts.exclusive,
    regions: opts.regions === undefined ? undefined : opts.regions.split(',').map((r) => r.trim()).filter(Boolean), reset: opts.reset,
  });
  await withContext(io, async (ctx) => {
    const c = await ctx.coupons.update(key.id, edit, { actor: 'cli' });
    if (opts.json) return printJson(io, c);
    io.stdout.write(`coupon ${c.id} updated\n`);
    printCoupon(io, c);
  });
}

export async function revert(io: Io, id: string, opts: { json?: boolean }): Promise<void> {
  const key = await validateInput(couponSchemas.id, { id });
  await withContext(io, async (ctx) => {
    const c = await ctx.coupons.revert(key.id, { actor: 'cli' });
    if (opts.json) return printJson(io, c);
    io.stdout.write(`coupon ${c.id} reverted to its text from before the AI rewrite\n`);
    printCoupon(io, c);
  });
}

/** Prints only the link (so `$(cashtrack coupons link ...)` works); `--json` the whole answer. */
export async function link(io: Io, id: string, opts: { member: string; json?: boolean }): Promise<void> {
  const key = await validateInput(couponSchemas.id, { id });
  const input = await validateInput(couponSchemas.link, { member: opts.member });
  await withContext(io, async (ctx) => {
    const result = await ctx.coupons.link(key.id, input.member);
    if (opts.json) return printJson(io, result);
    io.stdout.write(`${result.url}\n`);
  });
}

export async function refresh(io: Io, opts: { network?: string; force?: boolean; full?: boolean; json?: boolean; progress?: boolean }): Promise<void> {
  const input = await validateInput(couponSchemas.refresh, { network: opts.network, force: opts.force, full: opts.full });
  await withContext(io, async (ctx) => {
    const queued = await ctx.coupons.startRefresh(input, 'cli');
    if (!opts.json) io.stdout.write(`job ${queued.id} coupons.refresh started\n`);
    const job = await runInProcess(ctx, queued, jobProgressLine(io, opts));
    if (opts.json) return printJson(io, job);
    const result = (job.result ?? {}) as { networks?: Record<string, Record<string, unknown>>; failed?: Record<string, string> };
    const rows = Object.entries(result.networks ?? {}).map(([network, c]) => ({ network, ...c }));
    if (rows.length) printTable(io, rows, ['network', 'incremental', 'seen', 'created', 'updated', 'unchanged', 'removed', 'expired', 'failed', 'duplicates', 'bad_dates', 'skipped']);
    else io.stdout.write('no enabled, configured network with coupons to refresh\n');
    for (const [network, error] of Object.entries(result.failed ?? {})) io.stderr.write(`${network}: ${error}\n`);
  });
}
