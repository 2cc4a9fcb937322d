// The cashtrack side of `npm run bench:poll`, in its own process: configures the Admitad fixture,
// polls its orders twice (the first poll creates every order, the second finds them unchanged) and
// reports both times over IPC.
import { childContext, options, runChild, timed } from './lib/child-context.js';

const ctx = childContext({ loopback: true });
await runChild(ctx, async () => {
  await ctx.networks.configure('admitad', options.settings, 'bench');
  const since = new Date(options.since);
  const first = await timed(() => ctx.orders.poll('admitad', { since }));
  const again = await timed(() => ctx.orders.poll('admitad', { since }));
  const [{ n }] = await ctx.db.select("SELECT COUNT(*) AS n FROM orders WHERE network = 'admitad'");
  return { first: first.seconds, again: again.seconds, counts: first.result, stored: Number(n) };
});
