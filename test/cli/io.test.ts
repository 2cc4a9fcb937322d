import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import type { Config } from '../../src/config/index.js';
import { printFields, printJson, printTable, terminalSafe, testHold, validateInput, type Io } from '../../src/cli/io.js';
import { main } from '../../src/cli/main.js';
import { expectPlain, HOSTILE, HOSTILE_SHOWN } from '../helpers/terminal.js';
import { orderSchemas } from '../../src/services/orders/schemas.js';
import { payoutSchemas } from '../../src/services/payouts/schemas.js';

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

describe('validateInput', () => {
  it("returns the route schema's converted value, with the schema's type", async () => {
    const query = await validateInput(orderSchemas.list, { member_id: '7', unmatched: '0', after: '2026-03-01T00:00:00Z', page: undefined });
    // Typed: these compile only because the result is OrderFilters.
    const page: number = query.page;
    const after: Date | undefined = query.after;
    expect({ page, per_page: query.per_page, member_id: query.member_id, unmatched: query.unmatched, after }).toEqual({
      page: 1,
      per_page: 10,
      member_id: 7,
      unmatched: false,
      after: new Date('2026-03-01T00:00:00Z'),
    });
  });

  it('refuses as the REST route does, with the rest_* code and the field named', async () => {
    await expect(validateInput(payoutSchemas.create, { member_id: 1, amount: '5.00', method: 'paypal', currency: 'eur' })).rejects.toMatchObject({
      code: 'rest_invalid_param',
      status: 400,
      message: expect.stringContaining('currency'),
    });
    await expect(validateInput(payoutSchemas.cancel, {})).rejects.toMatchObject({ code: 'rest_missing_callback_param', status: 400 });
  });

  it('refuses at compile time an input key the schema does not have', async () => {
    // @ts-expect-error a misspelt key (memberid) would be dropped silently at run time
    await expect(validateInput(payoutSchemas.payoutId, { id: 3, memberid: 1 })).rejects.toMatchObject({ code: 'rest_invalid_param' });
  });
});

describe('the terminal gate every command prints through', () => {
  const capture = () => {
    let text = '';
    const stream = Object.assign(new PassThrough(), { isTTY: true, columns: 77 });
    stream.on('data', (c: Buffer) => (text += c.toString('utf8')));
    return { stream, text: () => text };
  };
  const gated = () => {
    const out = capture();
    const err = capture();
    const io = terminalSafe({ stdout: out.stream, stderr: err.stream, stdin: new PassThrough(), env: {} });
    return { io, out: out.text, err: err.text, raw: { out: out.stream, err: err.stream } };
  };

  it('strips every write on stdout and stderr, keeping the stream a terminal of its width, and keeps the raw streams apart', () => {
    const g = gated();
    g.io.stdout.write(`out ${HOSTILE}\n\tnext\n`);
    g.io.stderr.write(Buffer.from(`err ${HOSTILE}\n`));
    expect(g.out()).toBe(`out ${HOSTILE_SHOWN}\n\tnext\n`);
    expect(g.err()).toBe(`err ${HOSTILE_SHOWN}\n`);
    expect(g.io.stdout.isTTY).toBe(true);
    expect(g.io.stderr.columns).toBe(77);
    expect(g.io.raw?.stderr).toBe(g.raw.err);
    expect(terminalSafe(g.io)).toBe(g.io);
  });

  it('prints JSON exact, tables and fields on one line each, aligned on what is shown', () => {
    const g = gated();
    printJson(g.io, { name: HOSTILE });
    expectPlain(g.out());
    expect(JSON.parse(g.out())).toEqual({ name: HOSTILE });
    const t = gated();
    printTable(
      t.io,
      [
        { id: 1, name: `${HOSTILE}\nforged` },
        { id: 22, name: 'b' },
      ],
      ['id', 'name'],
    );
    expect(t.out()).toBe(`ID  NAME\n1   ${HOSTILE_SHOWN} forged\n22  b\n`);
    const f = gated();
    printFields(
      f.io,
      [
        ['title', `${HOSTILE}\nstatus  forged`],
        ['empty', ''],
        ['none', null],
      ],
      8,
    );
    expect(f.out()).toBe(`title   ${HOSTILE_SHOWN} status  forged\n`);
  });

  it("is what main() gives the commands: a usage error's echo of the command line comes out plain", async () => {
    const out = capture();
    const err = capture();
    const code = await main(['users', `bogus${HOSTILE}`], { stdout: out.stream, stderr: err.stream, stdin: new PassThrough(), env: {} });
    expect(code).toBe(2);
    expect(err.text()).toContain(`bogus${HOSTILE_SHOWN}`);
    expectPlain(err.text());
  });
});
