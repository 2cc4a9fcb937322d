import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { createTestDatabase, dialects, type TestDatabase } from '../helpers/context.js';
import { shopnetDefinition } from '../helpers/networks.js';

type Json = Record<string, any>;

for (const dialect of dialects) {
  describe(`cashtrack networks [${dialect}]`, () => {
    let db: TestDatabase;
    let file: string;
    beforeAll(async () => {
      db = await createTestDatabase(dialect);
      expect((await runCli(['db', 'migrate'], { db })).code).toBe(0);
      file = join(db.dataDir, 'clinet.json');
      writeFileSync(file, JSON.stringify(shopnetDefinition({ settings: [{ name: 'api_key', secret: true, required: true }, { name: 'region' }] })));
    });
    afterAll(() => db.drop());
    // Each test saves a network of its own from the file, so none depends on another's steps.
    const saveNetwork = async (id: string) => expect((await runCli(['networks', 'save', id, file], { db })).code).toBe(0);

    it('saves a custom network from a file or standard input, and lists and shows it', async () => {
      // A database of its own: it lists every custom network, and the other tests save theirs.
      const own = await createTestDatabase(dialect);
      try {
        expect((await runCli(['db', 'migrate'], { db: own })).code).toBe(0);
        const created = await runCli(['networks', 'save', 'clinet', file], { db: own });
        expect(created.code).toBe(0);
        expect(created.stdout).toBe('custom network clinet created\n');
        const updated = await runCli(['networks', 'save', 'clinet', '-', '--json'], {
          db: own,
          stdin: JSON.stringify(shopnetDefinition({ name: 'CLI Net', settings: [{ name: 'api_key', secret: true, required: true }, { name: 'region' }] })),
        });
        expect(updated.json<Json>()).toMatchObject({ id: 'clinet', name: 'CLI Net', configured: false });
        const bad = await runCli(['networks', 'save', 'clinet', '-'], {
          db: own,
          stdin: JSON.stringify(shopnetDefinition({ tracking_link: 'https://x.test/' })),
        });
        expect(bad.code).toBe(1);
        expect(bad.stderr).toMatch(/^svc_invalid_network: Invalid network definition: tracking_link: tracking_link must contain \{sub_id\}/);
        const notJson = await runCli(['networks', 'save', 'clinet', '-'], { db: own, stdin: '{' });
        expect(notJson.stderr).toMatch(/^svc_invalid_network: /);
        const list = await runCli(['networks', 'list'], { db: own });
        expect(list.stdout).toMatch(/ID\s+KIND\s+NAME/);
        expect(list.stdout).toMatch(/clinet\s+custom\s+CLI Net\s+yes\s+no\s+off/);
        expect((await runCli(['networks', 'list', '--kind', 'custom', '--json'], { db: own })).json<Json[]>().map((n) => n.id)).toEqual(['clinet']);
        const show = await runCli(['networks', 'show', 'clinet'], { db: own });
        expect(show.stdout).toMatch(/network\s+clinet \(custom\): CLI Net, EUR/);
        expect(show.stdout).toMatch(/api_key_set\s+no/);
        const missing = await runCli(['networks', 'show', 'nonet'], { db: own });
        expect(missing.code).toBe(1);
        expect(missing.stderr).toBe('svc_network_not_found: Network nonet not found.\n');
      } finally {
        await own.drop();
      }
    });

    it('takes secret settings only from standard input or the environment, and never prints them', async () => {
      await saveNetwork('secnet');
      const argv = await runCli(['networks', 'configure', 'secnet', '--set', 'api_key=sekrit-on-argv'], { db });
      expect(argv.code).toBe(2);
      expect(argv.stderr).toMatch(/^svc_usage: api_key is a secret: pass it with --secret-stdin api_key/);
      const stdin = await runCli(['networks', 'configure', 'secnet', '--secret-stdin', 'api_key', '--set', 'region=eu'], { db, stdin: 'sekrit-from-stdin\n' });
      expect(stdin.code).toBe(0);
      expect(stdin.stdout).toBe('network secnet configured (region, api_key); ready\n');
      const shown = await runCli(['networks', 'show', 'secnet', '--json'], { db });
      expect(shown.json<Json>()).toMatchObject({ configured: true, settings: { region: 'eu', api_key_set: true } });
      expect(shown.stdout).not.toContain('sekrit');
      const env = await runCli(['networks', 'configure', 'secnet', '--secret-env', 'api_key=FEED_KEY'], { db, env: { FEED_KEY: 'sekrit-from-env' } });
      expect(env.code).toBe(0);
      const noEnv = await runCli(['networks', 'configure', 'secnet', '--secret-env', 'api_key=NOT_SET_ANYWHERE'], { db });
      expect(noEnv.code).toBe(2);
      const unknown = await runCli(['networks', 'configure', 'secnet', '--set', 'colour=blue'], { db });
      expect(unknown.code).toBe(1);
      expect(unknown.stderr).toMatch(/^svc_unknown_setting: /);
      expect((await runCli(['networks', 'configure', 'secnet'], { db })).code).toBe(2);
      const unset = await runCli(['networks', 'configure', 'secnet', '--unset', 'region', '--json'], { db });
      expect(unset.json<Json>().settings).toEqual({ api_key_set: true });
    });

    it('enables and disables a network', async () => {
      await saveNetwork('onoffnet');
      expect((await runCli(['networks', 'disable', 'onoffnet'], { db })).stdout).toBe('network onoffnet disabled\n');
      expect((await runCli(['networks', 'enable', 'onoffnet', '--json'], { db })).json<Json>().enabled).toBe(true);
    });

    it('switches postbacks on in one step: makes the secret a network lacks, shows it once, and names the global switch still off', async () => {
      await saveNetwork('onenet');
      const on = await runCli(['networks', 'postbacks', 'onenet', 'on'], { db });
      expect(on.code, on.stderr).toBe(0);
      expect(on.stdout).toMatch(
        /^postbacks on for onenet from any address\nnew postback secret for onenet \(token mode\), shown once:\n\n {2}[A-Za-z0-9_-]{43}\n/,
      );
      const secret = /^ {2}([A-Za-z0-9_-]{43})$/m.exec(on.stdout)![1];
      expect(on.stdout).toContain(`?token=${secret}&`);
      expect(on.stderr).toBe(
        'note: Postbacks are on for onenet, but still off globally: set CASHTRACK_POSTBACKS_ENABLED=true (postbacks.enabled) and restart the daemon.\n',
      );
      // The secret works, is kept, and is never shown again: switching on again makes no new one.
      const shown = await runCli(['networks', 'show', 'onenet', '--json'], { db });
      expect(shown.json<Json>().postbacks).toMatchObject({ enabled: true, secret_set: true });
      expect(shown.stdout).not.toContain(secret);
      const again = await runCli(['networks', 'postbacks', 'onenet', 'on', '--json'], { db });
      expect(again.json<Json>()).toMatchObject({ secret: null, switches: { global: false, network: true }, network: { postbacks: { enabled: true } } });
      expect(again.stdout).not.toContain(secret);
      const off = await runCli(['networks', 'postbacks', 'onenet', 'off', '--json'], { db });
      expect(off.json<Json>()).toMatchObject({ secret: null, switches: { network: false }, message: null });
    });

    it('rotates the postback secret, shows it once, and switches postbacks with an allowlist', async () => {
      await saveNetwork('rotnet');
      const before = await runCli(['networks', 'postback-secret', 'rotnet'], { db });
      expect(before.stdout).toBe('rotnet: token mode, secret not set (run with --rotate for a new one)\n');
      const rotated = await runCli(['networks', 'postback-secret', 'rotnet', '--rotate', '--json'], { db });
      const { secret, mode } = rotated.json<Json>();
      expect(mode).toBe('token');
      expect(secret).toMatch(/^[A-Za-z0-9_-]{43}$/);
      const text = await runCli(['networks', 'postback-secret', 'rotnet', '--rotate', '--mode', 'hmac', '--grace-hours', '1'], { db });
      expect(text.stdout).toMatch(/^new postback secret for rotnet \(hmac mode\), shown once:\n\n {2}[A-Za-z0-9_-]{43}\n/);
      expect(text.stdout).toMatch(/the previous secret works until /);
      expect((await runCli(['networks', 'show', 'rotnet', '--json'], { db })).stdout).not.toContain(secret);
      const on = await runCli(['networks', 'postbacks', 'rotnet', 'on', '--allow-ip', '203.0.113.0/24, 2001:db8::/32'], { db });
      expect(on.stdout).toBe('postbacks on for rotnet from 203.0.113.0/24, 2001:db8::/32\n');
      expect(on.stderr).toContain('CASHTRACK_POSTBACKS_ENABLED=true');
      const any = await runCli(['networks', 'postbacks', 'rotnet', 'on', '--any-ip', '--json'], { db });
      expect(any.json<Json>().network.postbacks).toMatchObject({ enabled: true, mode: 'hmac', ip_allowlist: [] });
      expect((await runCli(['networks', 'postbacks', 'rotnet', 'maybe'], { db })).code).toBe(2);
      expect((await runCli(['networks', 'postbacks', 'rotnet', '--any-ip'], { db })).code).toBe(2);
      const badIp = await runCli(['networks', 'postbacks', 'rotnet', 'on', '--allow-ip', '10.0.0.300'], { db });
      expect(badIp.stderr).toMatch(/^svc_invalid_ip_allowlist: /);
      const list = await runCli(['networks', 'postbacks', 'rotnet'], { db });
      expect(list.stdout).toBe('(none)\n0 postback(s)\n');
      expect((await runCli(['networks', 'postbacks', 'rotnet', '--outcome', 'rejected', '--no-test', '--json'], { db })).json()).toEqual([]);
    });

    it('updates a custom network from a partial file, keeping what it does not send, and refuses to remove the mapping of switched-on postbacks', async () => {
      expect((await runCli(['networks', 'save', 'partnet', '-'], { db, stdin: JSON.stringify(shopnetDefinition()) })).code).toBe(0);
      expect((await runCli(['networks', 'postback-secret', 'partnet', '--rotate'], { db })).code).toBe(0);
      expect((await runCli(['networks', 'postbacks', 'partnet', 'on'], { db })).code).toBe(0);
      const renamed = await runCli(['networks', 'save', 'partnet', '-', '--json'], { db, stdin: '{"name": "Part Net"}' });
      expect(renamed.code, renamed.stderr).toBe(0);
      const full = shopnetDefinition();
      expect(renamed.json<Json>()).toMatchObject({
        name: 'Part Net',
        cashback_rule: { source: 'network' },
        postbacks: { enabled: true },
        definition: { tracking_link: full.tracking_link, postback: full.postback, statuses: full.statuses },
      });
      const unmapped = await runCli(['networks', 'save', 'partnet', '-'], { db, stdin: '{"postback": null}' });
      expect(unmapped.code).toBe(1);
      expect(unmapped.stderr).toMatch(/^svc_postback_no_mapping: Postbacks are switched on for partnet/);
      expect((await runCli(['networks', 'show', 'partnet', '--json'], { db })).json<Json>().definition.postback).toEqual(full.postback);
    });
  });
}

describe('cashtrack networks prune-postbacks', () => {
  it('deletes records older than the retention', async () => {
    const db = await createTestDatabase('sqlite');
    try {
      expect((await runCli(['db', 'migrate'], { db })).code).toBe(0);
      const res = await runCli(['networks', 'prune-postbacks', '--days', '30', '--json'], { db });
      expect(res.json()).toEqual({ deleted: 0, retention_days: 30 });
      expect((await runCli(['networks', 'prune-postbacks'], { db })).stdout).toBe('deleted 0 postback record(s) older than 90 day(s)\n');
    } finally {
      await db.drop();
    }
  });
});
