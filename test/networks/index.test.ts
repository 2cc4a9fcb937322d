import { describe, expect, it } from 'vitest';
import { builtInModules, getBuiltInModule } from '../../src/networks/index.js';
import { failure, collect, testRuntime } from '../fixtures/networks/runtime.js';

describe('the built-in network modules', () => {
  it('are Awin, Admitad and impact.com, found by id', () => {
    expect(builtInModules.map((m) => m.id)).toEqual(['awin', 'admitad', 'impact']);
    expect(getBuiltInModule('admitad')?.name).toBe('Admitad');
    expect(getBuiltInModule('cj')).toBeNull();
  });

  it('declare their settings, credentials marked secret, and a configurable base URL', () => {
    const secrets = Object.fromEntries(builtInModules.map((m) => [m.id, m.configKeys.filter((k) => k.secret).map((k) => k.name)]));
    expect(secrets).toEqual({ awin: ['api_token'], admitad: ['client_secret'], impact: ['auth_token'] });
    for (const m of builtInModules) {
      expect(m.configKeys.some((k) => k.name === 'base_url' && !k.required)).toBe(true);
      expect(m.isConfigured({})).toBe(false);
      expect(m.limits.maxWindowDays).toBeGreaterThan(0);
      expect(m.postbackTemplate).toBeTruthy();
      expect(typeof m.coupons).toBe('function');
      expect(new Set(Object.values(m.statusMap))).toEqual(new Set(['pending', 'approved', 'declined']));
    }
    expect(getBuiltInModule('awin')!.limits).toEqual({ maxWindowDays: 31, maxLookbackDays: null });
    expect(getBuiltInModule('impact')!.limits).toEqual({ maxWindowDays: 45, maxLookbackDays: 1095 });
  });

  it('refuse to call a network without their required settings or with a base URL that is not http(s)', async () => {
    for (const m of builtInModules) {
      expect(await failure(collect(m.listAdvertisers(testRuntime({}))))).toMatchObject({ code: 'svc_network_not_configured', status: 409 });
    }
    const awin = getBuiltInModule('awin')!;
    const err = await failure(collect(awin.listAdvertisers(testRuntime({ api_token: 't0ken', publisher_id: '1', base_url: 'file:///etc/passwd' }))));
    expect(err).toMatchObject({ code: 'svc_network_not_configured' });
    expect(err.message).not.toContain('t0ken');
  });
});
