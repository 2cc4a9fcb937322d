import { beforeAll, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.js';
import { describeEachDialect } from '../helpers/context.js';
import { adminClient, createActor, NS } from '../helpers/http.js';
import { fakeModule } from '../helpers/networks.js';

type Json = Record<string, any>;

const clock = new ManualClock('2026-05-01T09:30:00Z');

describeEachDialect(
  'schedules over REST',
  (use) => {
    const api = adminClient(use);
    beforeAll(async () => {
      const { ctx } = use();
      await ctx.networks.configure('fakenet', { publisherId: 'p1', apiToken: 'secret-token' }, 'test');
      await ctx.networks.enable('fakenet', 'test');
    });

    it('lists every schedule with its expression, zone, switches, next due time and last run', async () => {
      clock.set('2026-05-01T09:30:00Z');
      const res = await api.get('/schedules');
      expect(res.statusCode).toBe(200);
      const list = res.result as Json[];
      expect(list.map((s) => s.name)).toEqual([
        'advertisers_sync',
        'orders_poll',
        'coupons_refresh',
        'claims_poll',
        'claims_export',
        'networks_watchdog',
        'payouts_batch_status',
        'maintenance_prune',
        'networks_payments',
      ]);
      expect(list.find((s) => s.name === 'orders_poll')).toEqual({
        name: 'orders_poll',
        job_type: 'orders.poll',
        description: expect.any(String),
        available: true,
        cron: '*/15 * * * *',
        timezone: 'Europe/Berlin',
        enabled: true,
        catch_up: true,
        per_network: true,
        next_due: '2026-05-01T09:45:00.000Z',
        last_run: null,
        networks: [
          { network: 'fakenet', cron: '*/15 * * * *', timezone: 'Europe/Berlin', enabled: true, next_due: '2026-05-01T09:45:00.000Z', last_run: null },
        ],
      });
      expect(list.find((s) => s.name === 'maintenance_prune')).toMatchObject({ per_network: false, networks: null, enabled: false, next_due: null });
    });

    it('runs a schedule now for a network: 202 with the run and its job, then shows it as the last run', async () => {
      clock.set('2026-05-01T09:30:00Z');
      const res = await api.post('/schedules/orders_poll/run', { network: 'fakenet' });
      expect(res.statusCode).toBe(202);
      const [run] = res.result as Json[];
      expect(run).toMatchObject({
        schedule: 'orders_poll',
        network: 'fakenet',
        trigger: 'manual',
        status: 'queued',
        job_status: 'queued',
        actor: `user:${api.admin.id}`,
        slot: '2026-05-01T09:30:00.000Z',
      });
      expect(await use().ctx.jobs.get(run.job_id)).toMatchObject({ type: 'orders.poll', params: { network: 'fakenet' } });
      // Again while that job is queued: the run is recorded as skipped, with the reason.
      clock.advance(1000);
      const again = await api.post('/schedules/orders_poll/run', {});
      expect(again.statusCode).toBe(202);
      expect(again.result).toEqual([
        expect.objectContaining({ network: 'fakenet', status: 'skipped', job_id: run.job_id, reason: `job ${run.job_id} (orders.poll) is still queued` }),
      ]);
      const listed = ((await api.get('/schedules')).result as Json[]).find((s) => s.name === 'orders_poll')!;
      expect(listed.last_run).toMatchObject({ status: 'skipped', slot: '2026-05-01T09:30:01.000Z' });
      expect(listed.networks[0].last_run).toMatchObject({ status: 'skipped' });
      await use().ctx.jobs.cancel(run.job_id, 'test');
    });

    it('answers an unknown schedule, a network where none applies and bad input with their codes', async () => {
      const unknown = await api.post('/schedules/nightly/run', {});
      expect(unknown.statusCode).toBe(404);
      expect(unknown.result).toMatchObject({ code: 'svc_unknown_schedule', data: { status: 404, schedules: expect.arrayContaining(['orders_poll']) } });
      expect((await api.post('/schedules/maintenance_prune/run', { network: 'fakenet' })).result).toMatchObject({ code: 'svc_schedule_not_per_network' });
      const bad = await api.post('/schedules/orders_poll/run', { network: 'Not An Id' });
      expect(bad.statusCode).toBe(400);
      expect(bad.result).toMatchObject({ code: 'rest_invalid_param', data: { params: { network: expect.any(String) } } });
      expect((await api.post('/schedules/orders_poll/run', { everything: true })).statusCode).toBe(400);
      expect((await api.get('/schedules?page=2')).statusCode).toBe(400);
    });

    it('is for administrators only', async () => {
      const member = await createActor(use().ctx, 'member');
      const { server } = api;
      expect((await server.inject({ url: `${NS}/schedules` })).statusCode).toBe(401);
      expect((await server.inject({ url: `${NS}/schedules`, headers: { authorization: member.authorization } })).statusCode).toBe(403);
      expect(
        (await server.inject({ method: 'POST', url: `${NS}/schedules/orders_poll/run`, payload: {}, headers: { authorization: member.authorization } }))
          .statusCode,
      ).toBe(403);
    });
  },
  { 'schedules.orders_poll.enabled': true, 'schedules.orders_poll.cron': '*/15 * * * *', 'schedules.orders_poll.timezone': 'Europe/Berlin' },
  { clock, networkModules: [fakeModule('fakenet')] },
);
