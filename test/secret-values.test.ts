// The secret values a process opened are scrubbed wherever text is stored or printed, whatever
// road a secret took into it: a module's own error message (not a NetworkError), a log context, a
// job's error and result, a network's last error. The module here is a double that leaks on
// purpose, as a buggy or future module could.
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { JobRunner } from '../src/jobs/runner.js';
import type { NetworkModule } from '../src/networks/types.js';
import { SecretValues } from '../src/secret-values.js';
import { describeEachDialect } from './helpers/context.js';
import { fakeModule } from './helpers/networks.js';

const TOKEN = 'tok/en with+spaces-77c1a9';
const FORMS = [
  TOKEN,
  encodeURIComponent(TOKEN),
  new URLSearchParams({ v: TOKEN }).toString().slice(2),
  Buffer.from(TOKEN).toString('base64'),
  Buffer.from(TOKEN).toString('base64url'),
  JSON.stringify(TOKEN).slice(1, -1),
];

describe('the secret values of a process', () => {
  it('scrubs a secret in each of its shapes: as is, URL-encoded, form-encoded, Base64', () => {
    const secrets = new SecretValues();
    secrets.add(TOKEN, 'short', '', null);
    expect(secrets.size).toBe(1);
    for (const form of FORMS) expect(secrets.scrub(`before ${form} after`)).toBe('before [redacted] after');
    expect(secrets.scrub('short stays short')).toBe('short stays short');
  });

  it('scrubs strings nested in objects, arrays, keys and errors', () => {
    const secrets = new SecretValues();
    secrets.add(TOKEN);
    const out = secrets.scrubDeep({ a: [`x ${TOKEN}`], [TOKEN]: 1, e: new Error(`bad ${encodeURIComponent(TOKEN)}`), n: 3, d: null });
    expect(JSON.stringify(out)).not.toContain(TOKEN);
    expect(out).toMatchObject({ a: ['x [redacted]'], '[redacted]': 1, e: { message: 'bad [redacted]' }, n: 3, d: null });
  });

  it('keeps a bounded number of values, forgetting the oldest first', () => {
    const secrets = new SecretValues();
    for (let i = 0; i < 5000; i++) secrets.add(`secret-value-${i}`);
    expect(secrets.size).toBe(4096);
    expect(secrets.scrub('secret-value-4999')).toBe('[redacted]');
    expect(secrets.scrub('secret-value-0')).toBe('secret-value-0');
  });
});

class Lines extends Writable {
  text = '';
  override _write(chunk: Buffer, _enc: string, done: () => void) {
    this.text += chunk.toString();
    done();
  }
}
const stdout = new Lines();

/** A built-in module that puts its credential into a plain Error's message and its log context. */
function leakyModule(): NetworkModule {
  return {
    ...fakeModule('leakynet'),
    // biome-ignore lint/correctness/useYield: the module fails before its first page, as the leak it models does.
    async *listAdvertisers(rt) {
      rt.log('warning', `calling https://api.leaky.test/v1/programs?apiToken=${encodeURIComponent(rt.settings.apiToken!)}`, {
        url: `/v1/${rt.settings.apiToken}/x`,
        innocent: rt.settings.apiToken,
      });
      throw new Error(`upstream refused credential ${rt.settings.apiToken}`);
    },
  };
}

describeEachDialect(
  'scrubbing what a network opened',
  (use) => {
    it('keeps a secret setting out of the job error and result, the network state, the log and stdout, whatever the module wrote', async () => {
      const { ctx } = use();
      await ctx.networks.configure('leakynet', { publisherId: 'pub-1', apiToken: TOKEN }, 'test');
      await ctx.networks.enable('leakynet', 'test');
      const single = await ctx.jobs.enqueue('advertisers.sync', { network: 'leakynet' }, 'test');
      const all = await ctx.jobs.enqueue('advertisers.sync', {}, 'test');
      await new JobRunner({ ctx, jobs: ctx.jobs, concurrency: 1, leaseMs: 60_000, pollIntervalMs: 20 }).runPending();
      await ctx.logger.flush();

      const failed = await ctx.jobs.get(single.id);
      expect(failed).toMatchObject({ status: 'failed', error: 'upstream refused credential [redacted]' });
      // Every enabled network: the failure of one is in the result.
      expect(await ctx.jobs.get(all.id)).toMatchObject({ status: 'done', result: { failed: { leakynet: 'upstream refused credential [redacted]' } } });
      const network = await ctx.networks.get('leakynet');
      expect(network.last_error).toBe('upstream refused credential [redacted]');
      const logs = await ctx.logger.list({ page: 1, per_page: 100 });
      expect(logs.items.some((e) => e.message.includes('apiToken=[redacted]'))).toBe(true);
      expect(logs.items.some((e) => e.context?.innocent === '[redacted]')).toBe(true);
      const seen =
        JSON.stringify([
          failed,
          await ctx.jobs.list({ page: 1, per_page: 100 }),
          network,
          logs,
          await ctx.db.select('SELECT * FROM logs'),
          await ctx.db.select('SELECT * FROM jobs'),
          await ctx.db.select('SELECT last_error, last_sync_result FROM networks'),
        ]) + stdout.text;
      expect(stdout.text).toContain('upstream refused credential [redacted]');
      for (const form of FORMS) expect(seen).not.toContain(form);
    });
  },
  {},
  { networkModules: [leakyModule()], logStream: stdout },
);
