// The server side of `npm run bench:postbacks`, run in a child process so autocannon's CPU does not
// share the daemon's event loop. `node bench/postbacks-server.js <json>` migrates the database,
// switches postbacks on (config `postbacks.enabled`), defines the custom network `benchnet` with an
// HMAC postback secret and its postback switch on, and serves the daemon on a loopback port; the
// parent seeds the members itself. It reports `{ type: 'ready', ... }` (with the new secret) over
// IPC and stops on `{ type: 'stop' }`, SIGTERM or a lost parent. Profiles on demand like
// bench/ledger-server.js.
import { serveOverIpc, startDaemon } from './lib/daemon.js';

const [rawOptions] = process.argv.slice(2);

export const BENCH_NETWORK = 'benchnet';

async function startCashtrack(options) {
  const { server, config, ctx, close, cpuUsage, secret } = await startDaemon(options, {
    overrides: { 'postbacks.enabled': true },
    setup: async (ctx, config) => {
      const definition = {
        name: 'Bench Net',
        currency: config.currency,
        cashback: { type: 'percent_commission', value: '50' },
        tracking_link: 'https://go.benchnet.invalid/c/{advertiser_id}?subid={sub_id}&url={url}',
        statuses: { pending: 'pending', approved: 'approved', declined: 'declined' },
        postback: { params: { transaction_id: 'txn', status: 'status', sale_amount: 'amount', commission: 'payout', currency: 'cur', sub_id: 'subid' } },
      };
      await ctx.networks.saveCustom(BENCH_NETWORK, definition, 'bench');
      const { secret } = await ctx.networks.rotatePostbackSecret(BENCH_NETWORK, 'bench', { mode: 'hmac' });
      await ctx.networks.setPostbacks(BENCH_NETWORK, true, 'bench');
      await ctx.logger.flush();
      return { secret };
    },
  });
  return {
    close,
    cpuUsage,
    ready: {
      origin: server.info.uri,
      network: BENCH_NETWORK,
      postbackSecret: secret,
      dialect: ctx.db.dialect,
      poolMax: config.database.pool_max,
      currency: config.currency,
      workers: options.workers ?? 1,
    },
  };
}

if (process.send) serveOverIpc(() => startCashtrack(JSON.parse(rawOptions ?? 'null') ?? {}));
