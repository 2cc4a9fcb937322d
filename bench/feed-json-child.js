// The cashtrack side of `npm run bench:feed`, in its own process so its peak RSS is its own (the
// feed server runs in the parent). Defines a custom network whose advertiser feed is the parent's
// JSON document, syncs it once, and reports the time, the process's peak resident memory and the
// longest event-loop stall (what a /healthz probe would have waited) over IPC.
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { childContext, options, runChild, timed } from './lib/child-context.js';

const ctx = childContext({ loopback: true });
await runChild(ctx, async () => {
  await ctx.networks.saveCustom(
    'bench',
    {
      name: 'Bench Net',
      currency: 'EUR',
      statuses: { ok: 'approved' },
      feeds: {
        advertisers: {
          url: options.feedUrl,
          format: 'json',
          items: 'data.programs',
          fields: {
            id: 'id',
            name: 'name',
            site_url: 'url',
            logo_url: 'logo',
            commission_type: 'pay.type',
            commission_min: 'pay.min',
            commission_max: 'pay.max',
            categories: 'cats',
            countries: 'geo',
            status: 'state',
          },
          active_values: ['joined'],
        },
      },
    },
    'bench',
  );
  await ctx.networks.enable('bench', 'bench');
  const stalls = monitorEventLoopDelay({ resolution: 10 });
  stalls.enable();
  const { result, seconds } = await timed(() => ctx.advertisers.sync('bench'));
  stalls.disable();
  const [{ n }] = await ctx.db.select("SELECT COUNT(*) AS n FROM advertisers WHERE module = 'bench'");
  return { seconds, result, stored: Number(n), maxRssMb: process.resourceUsage().maxRSS / 1024, maxStallMs: stalls.max / 1e6 };
});
