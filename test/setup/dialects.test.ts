import { afterEach, describe, expect, it, vi } from 'vitest';
import checkDialects from './dialects.js';

describe('the CI check of the tested dialects', () => {
  afterEach(() => {
    vi.unstubAllEnvs();
  });

  it('fails a CI run without CASHTRACK_TEST_MYSQL_URL, naming the variable', () => {
    vi.stubEnv('CI', 'true');
    vi.stubEnv('CASHTRACK_TEST_MYSQL_URL', '');
    expect(() => checkDialects()).toThrow(/CASHTRACK_TEST_MYSQL_URL/);
  });

  it('lets a CI run with MariaDB, and a local run without CI, go ahead', () => {
    vi.stubEnv('CI', 'true');
    vi.stubEnv('CASHTRACK_TEST_MYSQL_URL', 'mysql://root@127.0.0.1:3306/test');
    expect(() => checkDialects()).not.toThrow();
    vi.stubEnv('CI', '');
    vi.stubEnv('CASHTRACK_TEST_MYSQL_URL', '');
    expect(() => checkDialects()).not.toThrow();
  });
});
