// Sessions and REST nonces at their documented edges, with the clock held still. Nonces are
// computed here from docs/api.md (an HMAC over the 12-hour tick, `wp_rest`, user and session),
// keyed as the daemon derives its nonce key from the secret.
import { createHmac, hkdfSync } from 'node:crypto';
import { beforeEach, expect, it } from 'vitest';
import { ManualClock } from '../../../src/clock.js';
import { describeEachDialect } from '../../helpers/context.js';

const TICK_MS = 43_200_000;
/** The start of a 12-hour tick: a nonce made at this instant belongs to tick `TICK`. */
const TICK = 41_000;
const clock = new ManualClock(new Date(TICK * TICK_MS));
const TTL_HOURS = 48;

describeEachDialect(
  'sessions and nonces',
  (use) => {
    let n = 0;
    beforeEach(() => {
      clock.set(new Date(TICK * TICK_MS));
    });
    const user = async () => use().ctx.users.create({ login: `sess${++n}`, email: `sess${n}@example.com` });
    const nonceKey = () => Buffer.from(hkdfSync('sha256', Buffer.from(use().config.secret!, 'utf8'), Buffer.from('cashtrack'), 'rest-nonce', 32));
    const nonceAt = (tick: number, userId: number, uuid: string) =>
      createHmac('sha256', nonceKey()).update(`${tick}|wp_rest|${userId}|${uuid}`).digest('hex').slice(-12, -2);

    it('makes the nonce the document describes: 10 hex characters of an HMAC over tick, action, user and session', async () => {
      const { ctx } = use();
      const { session } = await ctx.sessions.create(await user(), '203.0.113.1', 'test');
      expect(ctx.sessions.createNonce(session.user.id, session.uuid)).toBe(nonceAt(TICK, session.user.id, session.uuid));
    });

    it('accepts a nonce in its own tick (1) and the next (2), and refuses it one millisecond later', async () => {
      const { ctx } = use();
      const { session } = await ctx.sessions.create(await user(), null, null);
      const nonce = ctx.sessions.createNonce(session.user.id, session.uuid);
      expect(ctx.sessions.verifyNonce(nonce, session.user.id, session.uuid)).toBe(1);
      clock.advance(1);
      expect(ctx.sessions.verifyNonce(nonce, session.user.id, session.uuid)).toBe(2);
      clock.set(new Date((TICK + 1) * TICK_MS));
      expect(ctx.sessions.verifyNonce(nonce, session.user.id, session.uuid)).toBe(2);
      clock.advance(1);
      expect(ctx.sessions.verifyNonce(nonce, session.user.id, session.uuid)).toBe(false);
    });

    it('refuses a nonce of another session, another user, or the wrong shape', async () => {
      const { ctx } = use();
      const a = (await ctx.sessions.create(await user(), null, null)).session;
      const b = (await ctx.sessions.create(a.user, null, null)).session;
      // A nonce of digits only (about one in a hundred) is its own upper case, so the clock moves
      // to the first tick whose nonce has a letter: the upper-cased nonce then always differs.
      let tick = TICK;
      while (/^[0-9]+$/.test(nonceAt(tick, a.user.id, a.uuid))) tick++;
      clock.set(new Date(tick * TICK_MS));
      const nonce = ctx.sessions.createNonce(a.user.id, a.uuid);
      expect(ctx.sessions.verifyNonce(nonce, a.user.id, a.uuid)).toBe(1);
      expect(nonce.toUpperCase()).not.toBe(nonce);
      expect(ctx.sessions.verifyNonce(nonce, a.user.id, b.uuid)).toBe(false);
      expect(ctx.sessions.verifyNonce(nonce, a.user.id + 1, a.uuid)).toBe(false);
      for (const bad of ['', nonce.toUpperCase(), `${nonce}0`, nonce.slice(1), 'zzzzzzzzzz'])
        expect(ctx.sessions.verifyNonce(bad, a.user.id, a.uuid)).toBe(false);
    });

    it('resolves a session until exactly its expiry, and not for a malformed token, a revoked one or a disabled user', async () => {
      const { ctx } = use();
      const member = await user();
      const { token, session } = await ctx.sessions.create(member, null, null);
      expect(session.expires_at.getTime()).toBe(clock.now().getTime() + TTL_HOURS * 3_600_000);
      clock.set(new Date(session.expires_at.getTime() - 1000));
      expect(await ctx.sessions.resolve(token)).toMatchObject({ uuid: session.uuid, user: { id: member.id } });
      clock.set(session.expires_at);
      expect(await ctx.sessions.resolve(token)).toBeNull();
      clock.set(new Date(TICK * TICK_MS));
      expect(await ctx.sessions.resolve('short')).toBeNull();
      expect(await ctx.sessions.resolve(`${token}!`)).toBeNull();
      await ctx.users.setStatus(member.id, 'disabled');
      expect(await ctx.sessions.resolve(token)).toBeNull();
      await ctx.users.setStatus(member.id, 'active');
      expect(await ctx.sessions.resolve(token)).not.toBeNull();
      expect(await ctx.sessions.revoke(token)).toBe(true);
      expect(await ctx.sessions.revoke(token)).toBe(false);
      expect(await ctx.sessions.resolve(token)).toBeNull();
    });

    it("revokes every live session of one user and leaves other users' sessions alone", async () => {
      const { ctx } = use();
      const [ann, bob] = [await user(), await user()];
      const annTokens = [(await ctx.sessions.create(ann, null, null)).token, (await ctx.sessions.create(ann, null, null)).token];
      const bobToken = (await ctx.sessions.create(bob, null, null)).token;
      await ctx.sessions.revoke(annTokens[0]);
      expect(await ctx.sessions.revokeAll(ann.id)).toBe(1);
      for (const token of annTokens) expect(await ctx.sessions.resolve(token)).toBeNull();
      expect(await ctx.sessions.resolve(bobToken)).toMatchObject({ user: { id: bob.id } });
      expect(await ctx.sessions.revokeAll(ann.id)).toBe(0);
    });

    it('prunes sessions expired or revoked more than a day ago, and keeps the rest', async () => {
      const { ctx } = use();
      const member = await user();
      const count = async () => Number((await ctx.db.select<{ n: unknown }>('SELECT COUNT(*) AS n FROM sessions WHERE user_id = ?', [member.id]))[0].n);
      const expiring = (await ctx.sessions.create(member, null, null)).session;
      const revoked = (await ctx.sessions.create(member, null, null)).token;
      await ctx.sessions.revoke(revoked);
      clock.advance(TTL_HOURS * 3_600_000 - 1000);
      const live = (await ctx.sessions.create(member, null, null)).token;
      // One day after the revocation (plus a second), before the first session's expiry plus a day.
      clock.set(new Date(TICK * TICK_MS + 86_400_000 + 1000));
      await ctx.sessions.prune();
      expect(await count()).toBe(2);
      clock.set(new Date(expiring.expires_at.getTime() + 86_400_000 + 1000));
      await ctx.sessions.prune();
      expect(await count()).toBe(1);
      clock.set(new Date(TICK * TICK_MS + TTL_HOURS * 3_600_000));
      expect(await ctx.sessions.resolve(live)).not.toBeNull();
    });

    it('answers rest_not_logged_in when a nonce is asked for without a session', () => {
      expect(() => use().ctx.sessions.requireNonceable(null)).toThrow(expect.objectContaining({ code: 'rest_not_logged_in', status: 401 }));
    });
  },
  { 'auth.session_ttl_hours': TTL_HOURS },
  { clock },
);
