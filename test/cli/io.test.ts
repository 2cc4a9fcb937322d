import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import type { Config } from '../../src/config.js';
import { testHold, type Io } from '../../src/cli/io.js';

const io = (env: NodeJS.ProcessEnv): Io & { err: () => string } => {
  const stderr = new PassThrough();
  let text = '';
  stderr.on('data', (c: Buffer) => (text += c.toString('utf8')));
  return { stdout: new PassThrough(), stderr, stdin: new PassThrough(), env, err: () => text };
};

describe('the hold-in-transaction test hook', () => {
  it('is never armed outside the test environment, whatever CASHTRACK_TEST_HOLD_IN_TRANSACTION says', () => {
    for (const env of ['production', 'development']) {
      expect(testHold(io({ CASHTRACK_TEST_HOLD_IN_TRANSACTION: 'ledger.adjust' }), { env } as Config)).toBeUndefined();
    }
    expect(testHold(io({}), { env: 'test' } as Config)).toBeUndefined();
  });

  it('in the test environment holds only the named route, and says so on stderr', async () => {
    const streams = io({ CASHTRACK_TEST_HOLD_IN_TRANSACTION: 'ledger.adjust' });
    const hold = testHold(streams, { env: 'test' } as Config)!;
    await expect(hold('payouts.create')).resolves.toBeUndefined();
    expect(streams.err()).toBe('');
    let settled = false;
    void hold('ledger.adjust').finally(() => (settled = true));
    await new Promise((r) => setImmediate(r));
    expect(streams.err()).toBe('cashtrack: test hold: ledger.adjust is held inside its transaction\n');
    expect(settled).toBe(false);
  });
});
