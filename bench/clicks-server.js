// The server side of `npm run bench:clicks`, run in a child process so autocannon's CPU does not
// share the daemon's event loop. `node bench/clicks-server.js <json>` migrates the database, defines
// the custom network `clicknet` (enabled, with a tracking link template), 60 advertisers and 1,000
// members, and serves the daemon on a loopback port. It reports `{ type: 'ready', ... }` with the
// member ids and advertiser ids over IPC; the parent signs the /go/ tokens itself (it has the secret).
import { serveOverIpc, startDaemon } from './lib/daemon.js';

const [rawOptions] = process.argv.slice(2);

const NETWORK = 'clicknet';

async function start(options) {
  const { server, ctx, close, members, advertisers } = await startDaemon(options, {
    setup: async (ctx, config) => {
      await ctx.networks.saveCustom(
        NETWORK,
        {
          name: 'Click Net',
          currency: config.currency,
          cashback: { type: 'percent_commission', value: '50' },
          tracking_link: 'https://go.clicknet.invalid/c/{advertiser_id}?subid={sub_id}&url={url}',
          statuses: { pending: 'pending', approved: 'approved', declined: 'declined' },
          postback: { params: { transaction_id: 'txn', status: 'status', sale_amount: 'amount', commission: 'payout', currency: 'cur', sub_id: 'subid' } },
        },
        'bench',
      );
      const now = new Date();
      const advertisers = [];
      for (let i = 0; i < options.advertisers; i++) {
        const id = `shop-${i}`;
        await ctx.db.execute(
          "INSERT INTO advertisers (module, advertiser, name, categories, countries, status, last_seen_sync, created_at, updated_at) VALUES (?, ?, ?, '[]', '[]', 'active', 1, ?, ?)",
          [NETWORK, id, `Shop ${i}`, now, now],
        );
        advertisers.push(id);
      }
      const members = [];
      for (let i = 0; i < options.members; i++)
        members.push((await ctx.users.create({ login: `clicker${i}`, email: `clicker${i}@localhost.invalid` }, 'bench')).id);
      await ctx.logger.flush();
      return { members, advertisers };
    },
  });
  return { close, ready: { origin: server.info.uri, network: NETWORK, members, advertisers, dialect: ctx.db.dialect } };
}

if (process.send) serveOverIpc(() => start(JSON.parse(rawOptions ?? 'null') ?? {}));
