// The `schedules` section of the configuration (src/config.ts): defaults, variables, and every
// bad value refused at start with the key named.
import { describe, expect, it } from 'vitest';
import { ENV_KEYS, loadConfig, SCHEDULE_NAMES } from '../../src/config/index.js';
import { tempDir } from '../helpers/temp.js';

const dataDir = () => tempDir('cashtrack-config-');
const load = (env: Record<string, string> = {}, overrides: Record<string, unknown> = {}) =>
  loadConfig({ env: { CASHTRACK_DATA_DIR: dataDir(), ...env }, overrides });

describe('schedule configuration', () => {
  it('runs every schedule by default: sync daily, polling hourly, coupons every 12 hours, pruning daily, claims polled every 4 hours and exported daily, payments statements read daily, in UTC with catch-up; the watchdog every 5 minutes without; sent PayPal batches read every 10 minutes', () => {
    const { schedules } = load();
    expect(schedules).toEqual({
      advertisers_sync: { cron: '23 4 * * *', timezone: 'UTC', enabled: true, catch_up: true, networks: {} },
      orders_poll: { cron: '7 * * * *', timezone: 'UTC', enabled: true, catch_up: true, networks: {} },
      coupons_refresh: { cron: '41 */12 * * *', timezone: 'UTC', enabled: true, catch_up: true },
      maintenance_prune: { cron: '17 3 * * *', timezone: 'UTC', enabled: true, catch_up: true },
      claims_poll: { cron: '29 */4 * * *', timezone: 'UTC', enabled: true, catch_up: true },
      claims_export: { cron: '45 5 * * *', timezone: 'UTC', enabled: true, catch_up: true },
      networks_watchdog: { cron: '*/5 * * * *', timezone: 'UTC', enabled: true, catch_up: false },
      networks_payments: { cron: '37 5 * * *', timezone: 'UTC', enabled: true, catch_up: true, networks: {} },
      payouts_batch_status: { cron: '*/10 * * * *', timezone: 'UTC', enabled: true, catch_up: true },
    });
    // Tests switch them off: nothing fires behind a test's back.
    expect(Object.values(load({ CASHTRACK_ENV: 'test' }).schedules).map((s) => s.enabled)).toEqual([
      false,
      false,
      false,
      false,
      false,
      false,
      false,
      false,
      false,
    ]);
  });

  it('takes CASHTRACK_SCHEDULE_<NAME>_* variables for each schedule', () => {
    for (const name of SCHEDULE_NAMES)
      for (const f of ['CRON', 'TIMEZONE', 'ENABLED', 'CATCH_UP'])
        expect(ENV_KEYS[`CASHTRACK_SCHEDULE_${name.toUpperCase()}_${f}`]).toBe(`schedules.${name}.${f.toLowerCase()}`);
    const { schedules } = load({
      CASHTRACK_SCHEDULE_ORDERS_POLL_CRON: '*/5 * * * *',
      CASHTRACK_SCHEDULE_ORDERS_POLL_TIMEZONE: 'Europe/Berlin',
      CASHTRACK_SCHEDULE_ORDERS_POLL_ENABLED: 'no',
      CASHTRACK_SCHEDULE_ORDERS_POLL_CATCH_UP: 'off',
    });
    expect(schedules.orders_poll).toEqual({ cron: '*/5 * * * *', timezone: 'Europe/Berlin', enabled: false, catch_up: false, networks: {} });
  });

  it('takes per-network expressions and switches for the per-network schedules only', () => {
    const { schedules } = load({}, { 'schedules.advertisers_sync.networks': { awin: { cron: '0 */6 * * *' }, impact: { enabled: false } } });
    expect(schedules.advertisers_sync.networks).toEqual({ awin: { cron: '0 */6 * * *' }, impact: { enabled: false } });
    expect(() => load({}, { 'schedules.maintenance_prune.networks': { awin: { enabled: false } } })).toThrow(
      expect.objectContaining({ code: 'svc_invalid_config', data: { key: 'schedules.maintenance_prune.networks' } }),
    );
    expect(() => load({}, { 'schedules.orders_poll.networks': { awin: { cron: '0 0 * * * * *' } } })).toThrow(
      expect.objectContaining({
        code: 'svc_invalid_config',
        data: { key: 'schedules.orders_poll.networks.awin.cron' },
        message: expect.stringContaining('is not a cron expression'),
      }),
    );
    expect(() => load({}, { 'schedules.orders_poll.networks': { 'Not An Id': { enabled: true } } })).toThrow(
      expect.objectContaining({ code: 'svc_invalid_config' }),
    );
    expect(() => load({}, { 'schedules.orders_poll.networks': { awin: { timezone: 'UTC' } } })).toThrow(
      expect.objectContaining({ data: { key: 'schedules.orders_poll.networks.awin.timezone' } }),
    );
  });

  it.each([
    ['CASHTRACK_SCHEDULE_ADVERTISERS_SYNC_CRON', '60 * * * *', 'schedules.advertisers_sync.cron', '60 is a invalid expression for minute'],
    ['CASHTRACK_SCHEDULE_MAINTENANCE_PRUNE_CRON', 'nightly', 'schedules.maintenance_prune.cron', 'is not a cron expression'],
    ['CASHTRACK_SCHEDULE_COUPONS_REFRESH_TIMEZONE', 'Europe/Atlantis', 'schedules.coupons_refresh.timezone', '"Europe/Atlantis" is not a time zone'],
    ['CASHTRACK_SCHEDULE_ORDERS_POLL_ENABLED', 'sometimes', 'schedules.orders_poll.enabled', 'must be true or false'],
  ])('refuses %s=%s naming the key', (name, value, key, why) => {
    expect(() => load({ [name]: value })).toThrow(
      expect.objectContaining({
        code: 'svc_invalid_config',
        data: { key },
        message: expect.stringMatching(new RegExp(`${name} \\(${key.replace(/\./g, '\\.')}\\): .*${why.replace(/[.*()"/]/g, '\\$&')}`)),
      }),
    );
  });

  it('refuses an unknown schedule name', () => {
    expect(() => load({}, { 'schedules.nightly': { cron: '0 0 * * *', timezone: 'UTC', enabled: true, catch_up: true } })).toThrow(
      expect.objectContaining({ code: 'svc_invalid_config', data: { key: 'schedules.nightly' } }),
    );
  });
});
