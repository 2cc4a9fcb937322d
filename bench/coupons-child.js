// The cashtrack side of `npm run bench:coupons`, in its own process so its peak RSS is its own
// (the fixture network runs in the parent). Refreshes every coupon of the Admitad fixture, tells
// the parent (which then changes 1% of them), and refreshes again; reports both times, the peak
// resident memory after the first refresh and the counts over IPC.
import { childContext, options, runChild, timed } from './lib/child-context.js';

const ctx = childContext({ loopback: true });
const nextMessage = () => new Promise((resolve) => process.once('message', resolve));
await runChild(ctx, async () => {
  await ctx.networks.configure('admitad', options.settings, 'bench');
  await ctx.networks.enable('admitad', 'bench');
  const first = await timed(() => ctx.coupons.refresh('admitad'));
  const maxRssMb = process.resourceUsage().maxRSS / 1024;
  process.send({ type: 'first' });
  await nextMessage();
  const second = await timed(() => ctx.coupons.refresh('admitad'));
  const [{ n }] = await ctx.db.select("SELECT COUNT(*) AS n FROM coupons WHERE network = 'admitad' AND status <> 'removed'");
  return { first, second, maxRssMb, stored: Number(n) };
});
