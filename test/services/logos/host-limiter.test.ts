import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { HostLimiter } from '../../../src/services/logos/host-limiter.js';

describe('the per-host limiter', () => {
  it('runs at most perHost works at once per host and lets other hosts run beside them', async () => {
    const limiter = new HostLimiter(2);
    const active = new Map<string, number>();
    const peak = new Map<string, number>();
    const work = (host: string) =>
      limiter.run(host, async () => {
        active.set(host, (active.get(host) ?? 0) + 1);
        peak.set(host, Math.max(peak.get(host) ?? 0, active.get(host)!));
        await sleep(5);
        active.set(host, active.get(host)! - 1);
        return host;
      });
    const results = await Promise.all([
      ...Array.from({ length: 8 }, () => work('cdn.example')),
      ...Array.from({ length: 3 }, () => work('CDN.example')),
      work('other.example'),
    ]);
    expect(results).toHaveLength(12);
    expect(peak.get('cdn.example')! + (peak.get('CDN.example') ?? 0)).toBeLessThanOrEqual(4);
    expect(Math.max(...peak.values())).toBeLessThanOrEqual(2);
  });

  it('frees the slot of a work that throws', async () => {
    const limiter = new HostLimiter(1);
    await expect(limiter.run('h', async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    await expect(limiter.run('h', async () => 'next')).resolves.toBe('next');
  });
});
