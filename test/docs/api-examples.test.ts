// docs/api.md's curl examples are what a new user types first. Each one a fresh daemon can answer
// is run, in document order, through server.inject on a fresh database holding the people and the
// network the examples name (admin 1, ann 2, bob 3, Awin with advertiser 1001), with the
// documented application password swapped for the administrator's real one; its status must be
// the one the document gives it. The examples that need something no fresh daemon has are listed
// in SKIPPED, with why, and the test fails when that list and the document disagree.
import { readFileSync } from 'node:fs';
import type { Server, ServerInjectResponse } from '@hapi/hapi';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachDialect } from '../helpers/context.js';
import { basic, NS, testServer } from '../helpers/http.js';
import { addShop } from '../helpers/pages.js';

const doc = readFileSync(new URL('../../docs/api.md', import.meta.url), 'utf8');
const DOC_ORIGIN = 'http://127.0.0.1:8080';
const DOC_PASSWORD = 'xxxx xxxx xxxx xxxx xxxx xxxx';

/** Examples a fresh daemon cannot answer, by a piece of their command, with the reason. */
const SKIPPED: Record<string, string> = {
  'https://cashback.example/postback/shopnet?token=$TOKEN':
    "a network's postback: needs postbacks switched on and the token made at run time ($TOKEN), sent to the public site",
  'X-Postback-Signature: t=$T,v1=$SIG': "a signed postback: needs the network's HMAC secret ($SECRET) and openssl, sent to the public site",
};

interface Example {
  line: number;
  command: string;
  method: string;
  url: string;
  headers: Record<string, string>;
  body: string | undefined;
  user: string | undefined;
  saveCookies: boolean;
  sendCookies: boolean;
  status: number;
}

/** Splits a shell command into words: quotes, backslash-newlines, and `$NS` expanded. */
function words(command: string): string[] {
  const out: string[] = [];
  const text = command.replace(/\\\n/g, ' ');
  let i = 0;
  while (i < text.length) {
    while (/\s/.test(text[i] ?? '')) i++;
    if (i >= text.length) break;
    let word = '';
    while (i < text.length && !/\s/.test(text[i])) {
      const quote = text[i];
      if (quote === "'" || quote === '"') {
        const end = text.indexOf(quote, i + 1);
        const inner = text.slice(i + 1, end);
        word += quote === '"' ? inner.replaceAll('$NS', `${DOC_ORIGIN}${NS}`) : inner;
        i = end + 1;
      } else word += text[i++];
    }
    out.push(word);
  }
  return out;
}

/**
 * The status the document gives an example. Every example shows a route working, so it is the
 * answer printed after it (`HTTP/1.1 201`), else the first bold success status of its section
 * (`**202**`; the bold 4xx there describe errors), else 200.
 */
function documentedStatus(blockEnd: number): number {
  const after = doc.slice(blockEnd);
  const shown = /^\s*```\w*\n(?:HTTP\/1\.1 (\d{3}))?/.exec(after);
  if (shown?.[1]) return Number(shown[1]);
  const before = doc.slice(0, blockEnd);
  const sectionStart = before.lastIndexOf('\n#');
  const nextHeading = after.search(/\n#/);
  const section = doc.slice(sectionStart, blockEnd + (nextHeading === -1 ? after.length : nextHeading));
  const bold = /\*\*(2\d\d)\*\*/.exec(section);
  return bold ? Number(bold[1]) : 200;
}

function examples(): { run: Example[]; skipped: string[] } {
  const run: Example[] = [];
  const skipped: string[] = [];
  for (const m of doc.matchAll(/```sh\n([\s\S]*?)```/g)) {
    const line = doc.slice(0, m.index).split('\n').length;
    for (const command of m[1].split(/\n(?=\s*curl )/).filter((c) => /^\s*curl /m.test(c))) {
      const skip = Object.keys(SKIPPED).find((k) => command.includes(k));
      if (skip) {
        skipped.push(skip);
        continue;
      }
      const w = words(command.slice(command.indexOf('curl ')));
      const ex: Example = {
        line,
        command: command.trim(),
        method: 'GET',
        url: '',
        headers: {},
        body: undefined,
        user: undefined,
        saveCookies: false,
        sendCookies: false,
        status: documentedStatus(m.index + m[0].length),
      };
      for (let i = 1; i < w.length; i++) {
        const arg = w[i];
        if (arg === '-u') ex.user = w[++i];
        else if (arg === '-H') {
          const [name, ...value] = w[++i].split(':');
          ex.headers[name.trim().toLowerCase()] = value.join(':').trim();
        } else if (arg === '-d') ex.body = w[++i];
        else if (arg === '-X') ex.method = w[++i];
        else if (arg === '-c') (ex.saveCookies = true), i++;
        else if (arg === '-b') (ex.sendCookies = true), i++;
        else if (arg === '-i') continue;
        else if (arg.startsWith('-')) throw new Error(`docs/api.md line ${line}: curl option ${arg} is not understood by this test`);
        else ex.url = arg;
      }
      if (ex.body !== undefined && !w.includes('-X')) ex.method = 'POST';
      run.push(ex);
    }
  }
  return { run, skipped };
}

const { run, skipped } = examples();

it('finds the examples of docs/api.md, and skips exactly the listed ones', () => {
  // A floor: a broken parser must not make the next tests pass on nothing.
  expect(run.length).toBeGreaterThanOrEqual(12);
  expect(skipped.sort()).toEqual(Object.keys(SKIPPED).sort());
  for (const ex of run) expect(ex.url.startsWith(DOC_ORIGIN), `line ${ex.line}: ${ex.url}`).toBe(true);
});

describeEachDialect('the examples of docs/api.md against a fresh daemon', (use) => {
  let server: Server;
  let authorization: string;
  let cookie: string | null = null;
  let nonce: string | null = null;
  beforeAll(async () => {
    const { ctx } = use();
    server = await testServer(ctx);
    const admin = await ctx.users.create({ login: 'admin', email: 'admin@example.com', role: 'administrator' });
    authorization = basic('admin', (await ctx.appPasswords.create(admin, 'docs')).password);
    await ctx.users.create({ login: 'ann', email: 'ann@example.com', role: 'administrator', display_name: 'Ann Admin', password: 'correct horse battery' });
    const bob = await ctx.users.create({ login: 'bob', email: 'bob@example.com', role: 'member', display_name: 'Bob' });
    expect([admin.id, bob.id]).toEqual([1, 3]);
    // Bob's balance before the document's adjustment of 12.50 (which leaves 40.00).
    await ctx.ledger.adjust({ member_id: bob.id, type: 'credit', amount: '27.50', note: 'opening balance' }, 'test');
    await ctx.networks.configure('awin', { publisher_id: '77', api_token: 'docs-token' }, 'test');
    await ctx.networks.enable('awin', 'test');
    await addShop(ctx, 'awin', '1001', { domain: 'example-shoes.test', site_url: 'https://www.example-shoes.test/' });
  });
  afterAll(async () => {
    await server.stop();
  });

  it.each(run.map((ex) => [`line ${ex.line}: ${ex.method} ${ex.url.slice(DOC_ORIGIN.length)}`, ex] as const))(
    'answers the example at %s with its documented status',
    async (_name, ex) => {
      const headers: Record<string, string> = { ...ex.headers };
      if (ex.user) {
        expect(ex.user).toBe(`admin:${DOC_PASSWORD}`);
        headers.authorization = authorization;
      }
      if (ex.sendCookies) {
        expect(cookie, 'an example that sends cookies follows the login that saved them').not.toBeNull();
        headers.cookie = cookie!;
        // The nonce in the document is the login's; the one this login answered stands in for it.
        if (headers['x-wp-nonce']) headers['x-wp-nonce'] = nonce!;
      }
      const res: ServerInjectResponse = await server.inject({
        method: ex.method,
        url: ex.url.slice(DOC_ORIGIN.length),
        headers,
        payload: ex.body,
      });
      expect(res.statusCode, `${ex.command}\n→ ${res.payload}`).toBe(ex.status);
      if (ex.saveCookies) {
        const set = ([] as string[]).concat(res.headers['set-cookie'] ?? []);
        cookie = set.map((c) => c.split(';')[0]).join('; ');
        nonce = (res.result as { nonce?: string }).nonce ?? null;
      }
    },
  );
});
