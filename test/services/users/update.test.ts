// Changing a user: the last active administrator stays one, even when two demotions race.
import { expect, it } from 'vitest';
import { describeEachDialect } from '../../helpers/context.js';

describeEachDialect('users: update', (use) => {
  it('of two administrators demoted at the same time, exactly one is demoted', async () => {
    const { users } = use().ctx;
    const a = await users.create({ login: 'race-a', email: 'race-a@example.com', role: 'administrator' });
    const b = await users.create({ login: 'race-b', email: 'race-b@example.com', role: 'administrator' });
    const outcomes = await Promise.allSettled([users.update(a.id, { role: 'member' }), users.update(b.id, { role: 'member' })]);
    expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(1);
    const refused = outcomes.find((o) => o.status === 'rejected') as PromiseRejectedResult;
    expect(refused.reason).toMatchObject({ code: 'svc_last_administrator', status: 409 });
    expect(await users.hasAdministrator()).toBe(true);
  });

  it('refuses an empty change and an unknown user in words', async () => {
    const { users } = use().ctx;
    await expect(users.update(999999, { display_name: 'Nobody' })).rejects.toMatchObject({ code: 'svc_user_not_found', status: 404 });
    await expect(users.update(1, {})).rejects.toMatchObject({ code: 'svc_invalid_user', status: 400 });
  });
});
