import { chmodSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/index.js';
import { tempDir } from '../helpers/temp.js';

const dataDir = () => tempDir('cashtrack-config-');

describe('configuration', () => {
  it('has the documented defaults', () => {
    const c = loadConfig({ env: { CASHTRACK_DATA_DIR: dataDir() } });
    expect(c.database.url).toBe('sqlite:data/cashtrack.sqlite');
    expect(c.server).toMatchObject({ host: '127.0.0.1', port: 8080, workers: 1, rest_root: 'wp-json' });
    expect(c.env).toBe('development');
  });

  it('takes CASHTRACK_* variables over the files', () => {
    const c = loadConfig({
      env: {
        CASHTRACK_DATA_DIR: dataDir(),
        CASHTRACK_PORT: '9090',
        CASHTRACK_HOST: '0.0.0.0',
        CASHTRACK_REST_ROOT: 'api',
        CASHTRACK_DATABASE_URL: 'mariadb://u:p@db:3306/ct',
        CASHTRACK_TRUST_PROXY: 'yes',
        CASHTRACK_CORS_ORIGINS: 'https://a.example, https://b.example',
      },
    });
    expect(c.server).toMatchObject({
      port: 9090,
      host: '0.0.0.0',
      rest_root: 'api',
      trust_proxy: true,
      cors_origins: ['https://a.example', 'https://b.example'],
    });
    expect(c.database.url).toBe('mariadb://u:p@db:3306/ct');
  });

  it.each([
    ['CASHTRACK_PORT', '70000', 'server.port'],
    ['CASHTRACK_DATABASE_URL', 'postgres://x/y', 'database.url'],
    ['CASHTRACK_REST_ROOT', '/bad root', 'server.rest_root'],
    ['CASHTRACK_LOG_LEVEL', 'verbose', 'log.level'],
    ['CASHTRACK_TRUST_PROXY', 'maybe', 'server.trust_proxy'],
    ['CASHTRACK_SECRET', 'short', 'secret'],
    ['CASHTRACK_WORKERS', '0', 'server.workers'],
    ['CASHTRACK_WORKERS', '65', 'server.workers'],
    ['CASHTRACK_WORKERS', 'all', 'server.workers'],
  ])('refuses %s=%s naming the key', (name, value, key) => {
    expect(() => loadConfig({ env: { CASHTRACK_DATA_DIR: dataDir(), [name]: value } })).toThrow(
      expect.objectContaining({ code: 'svc_invalid_config', message: expect.stringContaining(`${name} (${key})`) }),
    );
  });

  it('takes CASHTRACK_WORKERS as a count or auto, and workerCount makes auto one per CPU', async () => {
    const { workerCount } = await import('../../src/config/workers.js');
    const { availableParallelism } = await import('node:os');
    expect(loadConfig({ env: { CASHTRACK_DATA_DIR: dataDir(), CASHTRACK_WORKERS: '4' } }).server.workers).toBe(4);
    const auto = loadConfig({ env: { CASHTRACK_DATA_DIR: dataDir(), CASHTRACK_WORKERS: 'auto' } }).server.workers;
    expect(auto).toBe('auto');
    expect(workerCount(auto)).toBe(Math.min(availableParallelism(), 64));
    expect(workerCount(3)).toBe(3);
  });

  it('generates a secret on first run, keeps it private in the data directory, and reuses it', () => {
    const dir = dataDir();
    const first = loadConfig({ env: { CASHTRACK_DATA_DIR: dir } });
    expect(first.secret).toMatch(/^[0-9a-f]{64}$/);
    expect(readFileSync(join(dir, 'secret'), 'utf8').trim()).toBe(first.secret);
    expect(statSync(join(dir, 'secret')).mode & 0o077).toBe(0);
    expect(loadConfig({ env: { CASHTRACK_DATA_DIR: dir } }).secret).toBe(first.secret);
  });

  it('creates the data directory 0700, and tightens an existing one and its secret that others could read', () => {
    const fresh = join(dataDir(), 'a', 'b');
    loadConfig({ env: { CASHTRACK_DATA_DIR: fresh } });
    expect(statSync(fresh).mode & 0o777).toBe(0o700);
    expect(statSync(join(fresh, '..')).mode & 0o777).toBe(0o700);
    const old = dataDir();
    chmodSync(old, 0o755);
    writeFileSync(join(old, 'secret'), `${'y'.repeat(64)}\n`, { mode: 0o644 });
    chmodSync(join(old, 'secret'), 0o644);
    expect(loadConfig({ env: { CASHTRACK_DATA_DIR: old } }).secret).toBe('y'.repeat(64));
    expect(statSync(join(old, 'secret')).mode & 0o777).toBe(0o600);
  });

  it('configures the job runner from CASHTRACK_JOBS_* and refuses a negative concurrency', () => {
    expect(loadConfig({ env: { CASHTRACK_DATA_DIR: dataDir() } }).jobs).toEqual({
      concurrency: 2,
      lease_seconds: 60,
      poll_interval_ms: 1000,
      max_attempts: 5,
      retention_days: 90,
    });
    const c = loadConfig({
      env: { CASHTRACK_DATA_DIR: dataDir(), CASHTRACK_JOBS_CONCURRENCY: '0', CASHTRACK_JOBS_LEASE_SECONDS: '30', CASHTRACK_JOBS_POLL_INTERVAL_MS: '250' },
    });
    expect(c.jobs).toMatchObject({ concurrency: 0, lease_seconds: 30, poll_interval_ms: 250 });
    expect(() => loadConfig({ env: { CASHTRACK_DATA_DIR: dataDir(), CASHTRACK_JOBS_CONCURRENCY: '-1' } })).toThrow(
      /CASHTRACK_JOBS_CONCURRENCY \(jobs\.concurrency\)/,
    );
  });

  it('keeps scrypt at N=2^17 or more outside tests, and bounds login password checks', () => {
    const c = loadConfig({ env: { CASHTRACK_DATA_DIR: dataDir() } });
    expect(c.auth).toMatchObject({
      scrypt_log_n: 17,
      password_checks: { max_concurrent: 2, per_address: 1 },
      throttle: { window_seconds: 900, max_failures_per_address: 30, failures_before_delay: 5, max_delay_seconds: 60 },
    });
    expect(() => loadConfig({ env: { CASHTRACK_DATA_DIR: dataDir(), CASHTRACK_SCRYPT_LOG_N: '16' } })).toThrow(
      expect.objectContaining({
        code: 'svc_invalid_config',
        message: expect.stringContaining('CASHTRACK_SCRYPT_LOG_N (auth.scrypt_log_n): must be at least 17'),
      }),
    );
    expect(() =>
      loadConfig({
        env: { CASHTRACK_ENV: 'production', CASHTRACK_SECRET: 'x'.repeat(40), CASHTRACK_DATA_DIR: dataDir() },
        overrides: { 'auth.scrypt_log_n': 12 },
      }),
    ).toThrow(/auth\.scrypt_log_n/);
    expect(loadConfig({ env: { CASHTRACK_ENV: 'test', CASHTRACK_DATA_DIR: dataDir() } }).auth.scrypt_log_n).toBeLessThan(17);
    expect(
      loadConfig({ env: { CASHTRACK_DATA_DIR: dataDir(), CASHTRACK_PASSWORD_CHECKS_MAX_CONCURRENT: '3', CASHTRACK_PASSWORD_CHECKS_PER_ADDRESS: '2' } }).auth
        .password_checks,
    ).toEqual({ max_concurrent: 3, per_address: 2 });
    expect(() => loadConfig({ env: { CASHTRACK_DATA_DIR: dataDir(), CASHTRACK_PASSWORD_CHECKS_MAX_CONCURRENT: '0' } })).toThrow(
      /CASHTRACK_PASSWORD_CHECKS_MAX_CONCURRENT/,
    );
  });

  it('requires a secret in production', () => {
    expect(() => loadConfig({ env: { CASHTRACK_ENV: 'production', CASHTRACK_DATA_DIR: dataDir() } })).toThrow(/CASHTRACK_SECRET/);
    expect(
      loadConfig({
        env: {
          CASHTRACK_ENV: 'production',
          CASHTRACK_DATA_DIR: dataDir(),
          CASHTRACK_SECRET: 'x'.repeat(40),
          CASHTRACK_PUBLIC_URL: 'https://admin.example.com',
        },
      }).secret,
    ).toBe('x'.repeat(40));
  });

  it('requires a public URL in production, naming the key', () => {
    const env = { CASHTRACK_ENV: 'production', CASHTRACK_DATA_DIR: dataDir(), CASHTRACK_SECRET: 'x'.repeat(40) };
    expect(() => loadConfig({ env })).toThrow(
      expect.objectContaining({
        code: 'svc_invalid_config',
        message: expect.stringContaining('CASHTRACK_PUBLIC_URL (server.public_url): required in production'),
        data: { key: 'server.public_url' },
      }),
    );
    expect(loadConfig({ env: { ...env, CASHTRACK_PUBLIC_URL: 'https://admin.example.com' } }).server.public_url).toBe('https://admin.example.com');
    expect(loadConfig({ env: { ...env, CASHTRACK_ENV: 'development' } }).server.public_url).toBeNull();
  });

  it('takes the allowed hosts and the anonymous body limit from CASHTRACK_* variables, and refuses bad ones', () => {
    const c = loadConfig({
      env: {
        CASHTRACK_DATA_DIR: dataDir(),
        CASHTRACK_ALLOWED_HOSTS: 'admin.example.com, 127.0.0.1:8080,[::1]:8080',
        CASHTRACK_ANONYMOUS_MAX_BODY_BYTES: '4096',
      },
    });
    expect(c.server).toMatchObject({ allowed_hosts: ['admin.example.com', '127.0.0.1:8080', '[::1]:8080'], anonymous_max_body_bytes: 4096 });
    expect(loadConfig({ env: { CASHTRACK_DATA_DIR: dataDir() } }).server).toMatchObject({ allowed_hosts: [], anonymous_max_body_bytes: 16384 });
    for (const bad of ['https://admin.example.com', 'admin.example.com/x', '*.example.com', 'a b']) {
      expect(() => loadConfig({ env: { CASHTRACK_DATA_DIR: dataDir(), CASHTRACK_ALLOWED_HOSTS: bad } })).toThrow(
        expect.objectContaining({ message: expect.stringContaining('CASHTRACK_ALLOWED_HOSTS') }),
      );
    }
    expect(() => loadConfig({ env: { CASHTRACK_DATA_DIR: dataDir(), CASHTRACK_ANONYMOUS_MAX_BODY_BYTES: '2000000' } })).toThrow(
      expect.objectContaining({ message: expect.stringContaining('must not be larger than server.max_body_bytes') }),
    );
  });
});

describe('postback configuration', () => {
  it('keeps postbacks off by default and takes the CASHTRACK_POSTBACKS_* variables', () => {
    expect(loadConfig({ env: { CASHTRACK_DATA_DIR: dataDir() } }).postbacks).toEqual({
      enabled: false,
      retention_days: 90,
      max_query_bytes: 8192,
      max_body_bytes: 65536,
      signature_tolerance_seconds: 300,
      batch_max: 100,
      batches_in_flight: 2,
      rejections: { window_seconds: 300, max_per_address: 20, aggregate_after: 5 },
    });
    const c = loadConfig({
      env: {
        CASHTRACK_DATA_DIR: dataDir(),
        CASHTRACK_POSTBACKS_ENABLED: 'on',
        CASHTRACK_POSTBACKS_RETENTION_DAYS: '30',
        CASHTRACK_POSTBACKS_SIGNATURE_TOLERANCE_SECONDS: '120',
      },
    });
    expect(c.postbacks).toMatchObject({ enabled: true, retention_days: 30, signature_tolerance_seconds: 120 });
    expect(() => loadConfig({ env: { CASHTRACK_DATA_DIR: dataDir(), CASHTRACK_POSTBACKS_ENABLED: 'maybe' } })).toThrow(
      expect.objectContaining({ message: expect.stringContaining('CASHTRACK_POSTBACKS_ENABLED (postbacks.enabled)') }),
    );
    expect(() => loadConfig({ env: { CASHTRACK_DATA_DIR: dataDir(), CASHTRACK_POSTBACKS_SIGNATURE_TOLERANCE_SECONDS: '86400' } })).toThrow(
      expect.objectContaining({ code: 'svc_invalid_config' }),
    );
    const limits = loadConfig({
      env: {
        CASHTRACK_DATA_DIR: dataDir(),
        CASHTRACK_POSTBACKS_REJECTIONS_WINDOW_SECONDS: '600',
        CASHTRACK_POSTBACKS_REJECTIONS_MAX_PER_ADDRESS: '50',
        CASHTRACK_POSTBACKS_REJECTIONS_AGGREGATE_AFTER: '0',
      },
    });
    expect(limits.postbacks.rejections).toEqual({ window_seconds: 600, max_per_address: 50, aggregate_after: 0 });
    expect(() => loadConfig({ env: { CASHTRACK_DATA_DIR: dataDir(), CASHTRACK_POSTBACKS_REJECTIONS_MAX_PER_ADDRESS: '0' } })).toThrow(
      expect.objectContaining({ code: 'svc_invalid_config' }),
    );
  });

  it('validates network settings from the configuration files', () => {
    expect(loadConfig({ env: { CASHTRACK_DATA_DIR: dataDir() }, overrides: { networks: { awin: { publisherId: '1' } } } }).networks).toEqual({
      awin: { publisherId: '1' },
    });
    expect(() => loadConfig({ env: { CASHTRACK_DATA_DIR: dataDir() }, overrides: { networks: { 'Bad Id': {} } } })).toThrow(
      expect.objectContaining({ code: 'svc_invalid_config' }),
    );
    expect(() => loadConfig({ env: { CASHTRACK_DATA_DIR: dataDir() }, overrides: { networks: { awin: { publisherId: 1 } } } })).toThrow(
      expect.objectContaining({ code: 'svc_invalid_config' }),
    );
  });

  it('holds orders above 1000.00 by default, takes CASHTRACK_ORDERS_REVIEW_ABOVE, and refuses a ceiling it cannot read', () => {
    expect(loadConfig({ env: { CASHTRACK_DATA_DIR: dataDir() } }).orders).toEqual({ review_above: '1000.00' });
    expect(loadConfig({ env: { CASHTRACK_DATA_DIR: dataDir(), CASHTRACK_ORDERS_REVIEW_ABOVE: '500.00 GBP, 80000 JPY' } }).orders.review_above).toBe(
      '500.00 GBP, 80000 JPY',
    );
    expect(loadConfig({ env: { CASHTRACK_DATA_DIR: dataDir() }, overrides: { 'orders.review_above': null } }).orders.review_above).toBeNull();
    for (const bad of ['ten', '12.50 XYZ', '1.005 USD', '1, 2']) {
      expect(() => loadConfig({ env: { CASHTRACK_DATA_DIR: dataDir(), CASHTRACK_ORDERS_REVIEW_ABOVE: bad } })).toThrow(
        expect.objectContaining({ code: 'svc_invalid_config', message: expect.stringContaining('CASHTRACK_ORDERS_REVIEW_ABOVE (orders.review_above)') }),
      );
    }
    expect(loadConfig({ env: { CASHTRACK_DATA_DIR: dataDir() }, overrides: { networks: { awin: { review_above: 'none' } } } }).networks.awin).toEqual({
      review_above: 'none',
    });
    expect(() => loadConfig({ env: { CASHTRACK_DATA_DIR: dataDir() }, overrides: { networks: { awin: { review_above: '5 pounds' } } } })).toThrow(
      expect.objectContaining({ code: 'svc_invalid_config', message: expect.stringContaining('networks.awin.review_above') }),
    );
  });
});

describe('configuration keys that would reach a prototype', () => {
  const configDirWith = (extra: string) => {
    const dir = tempDir('cashtrack-config-dir-');
    const defaults = readFileSync(join(import.meta.dirname, '../../config/default.json'), 'utf8');
    writeFileSync(join(dir, 'default.json'), defaults.replace(/\}\s*$/, `, ${extra} }`));
    return dir;
  };

  it.each([
    [{ 'networks.__proto__.polluted': 'x' }],
    [{ 'networks.constructor.prototype.polluted': 'x' }],
    [{ '__proto__.polluted': 'x' }],
    [{ networks: JSON.parse('{"__proto__": {"polluted": "x"}}') }],
    [{ networks: { awin: JSON.parse('{"constructor": {"prototype": {"polluted": "x"}}}') } }],
  ])('refuses the override %j and leaves Object.prototype alone', (overrides) => {
    expect(() => loadConfig({ env: { CASHTRACK_DATA_DIR: dataDir() }, overrides })).toThrow(
      expect.objectContaining({ code: 'svc_invalid_config', message: expect.stringContaining('cannot be a configuration key') }),
    );
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.getOwnPropertyNames(Object.prototype)).not.toContain('polluted');
  });

  it('refuses a configuration file with a __proto__ or constructor key', () => {
    for (const extra of ['"__proto__": {"polluted": "x"}', '"server": {"__proto__": {"polluted": "x"}}', '"networks": {"awin": {"constructor": "x"}}']) {
      expect(() => loadConfig({ env: { CASHTRACK_DATA_DIR: dataDir() }, configDir: configDirWith(extra) })).toThrow(
        expect.objectContaining({ code: 'svc_invalid_config' }),
      );
    }
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});
