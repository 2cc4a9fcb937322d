// The cashtrack side of `npm run bench:sync`, in its own process so its peak RSS is its own (the
// fixture network runs in the parent). Syncs every advertiser of the Admitad fixture once and
// reports the time and the process's peak resident memory over IPC.
import { childContext, options, runChild, timed } from './lib/child-context.js';

const ctx = childContext({ loopback: true });
await runChild(ctx, async () => {
  await ctx.networks.configure('admitad', options.settings, 'bench');
  const { result, seconds } = await timed(() => ctx.advertisers.sync('admitad'));
  const [{ n }] = await ctx.db.select("SELECT COUNT(*) AS n FROM advertisers WHERE module = 'admitad' AND status = 'active'");
  return { seconds, result, stored: Number(n), maxRssMb: process.resourceUsage().maxRSS / 1024 };
});
