// A network's postback settings: the switch with its IP allowlist, and the secret, rotated with
// an optional grace period. Token mode keeps only the secret's keyed hash, HMAC mode keeps it encrypted.
import { ServiceError } from '../../errors.js';
import { newPostbackSecret, normaliseAllowlist, POSTBACK_MODES, tokenHash, type PostbackMode } from './postback-secrets.js';
import type { NetworkStore } from './store.js';

const MAX_GRACE_HOURS = 24 * 7;

/**
 * Writes the switch of NetworkService.setPostbacks and switchPostbacks (which then read the
 * network back). Switching on needs a secret: without one, `generate` makes one in the same
 * transaction (returned, to be shown once), else 409 svc_postback_secret_missing.
 */
export async function writePostbackSwitch(
  store: NetworkStore,
  id: string,
  on: boolean,
  actor: string,
  options: { ip_allowlist?: string[] | null; generate?: boolean } = {},
): Promise<{ secret: string | null }> {
  const allowlist = options.ip_allowlist === undefined ? undefined : options.ip_allowlist === null ? [] : normaliseAllowlist(options.ip_allowlist);
  await store.resolve(id);
  let secret: string | null = null;
  let mode: PostbackMode = 'token';
  await store.update(id, async (row, t) => {
    if (on && row.kind === 'custom' && !row.definition?.postback) {
      throw new ServiceError(
        'svc_postback_no_mapping',
        `The custom network ${id} has no postback parameter mapping: add "postback" to its definition first.`,
        409,
      );
    }
    const sets = ['postbacks_enabled = ?', 'updated_at = ?'];
    const now = store.deps.clock.now();
    const params: unknown[] = [on, now];
    if (on && !row.postback_secret) {
      if (!options.generate) throw secretMissing(id);
      mode = row.postback_mode;
      secret = newPostbackSecret();
      sets.push('postback_secret = ?', 'postback_secret_set_at = ?', 'postback_previous_secret = NULL', 'postback_previous_until = NULL');
      params.push(storedSecret(store, id, mode, secret), now);
    }
    if (allowlist !== undefined) sets.push('postback_ip_allowlist = ?'), params.push(allowlist.length ? JSON.stringify(allowlist) : null);
    await store.deps.db.execute(`UPDATE networks SET ${sets.join(', ')} WHERE id = ?`, [...params, id], t);
  });
  if (secret !== null) {
    store.deps.secrets?.add(secret);
    store.deps.logger.info('networks', 'Postback secret generated', { network: id, mode, actor });
  }
  store.deps.logger.info('networks', on ? 'Postbacks switched on' : 'Postbacks switched off', { network: id, ip_allowlist: allowlist, actor });
  return { secret };
}

/** How a secret is kept: token mode only its keyed hash, HMAC mode encrypted (verifying needs it). */
function storedSecret(store: NetworkStore, id: string, mode: PostbackMode, secret: string): string {
  return mode === 'hmac' ? store.box.seal(secret, `network:${id}:postback`) : tokenHash(store.deps.keys.postback, id, secret);
}

/** Generates and stores the secret of NetworkService.rotatePostbackSecret (which then reads the network back). */
export async function rotateSecret(
  store: NetworkStore,
  id: string,
  actor: string,
  options: { mode?: PostbackMode; grace_hours?: number } = {},
): Promise<{ secret: string; mode: PostbackMode }> {
  if (options.mode !== undefined && !(POSTBACK_MODES as readonly string[]).includes(options.mode)) {
    throw new ServiceError('svc_invalid_postback_mode', `The postback mode must be one of ${POSTBACK_MODES.join(', ')}.`, 400, { field: 'mode' });
  }
  const grace = options.grace_hours ?? 0;
  if (!Number.isInteger(grace) || grace < 0 || grace > MAX_GRACE_HOURS) {
    throw new ServiceError('svc_invalid_grace', `The grace period must be 0 to ${MAX_GRACE_HOURS} hours.`, 400, { field: 'grace_hours' });
  }
  await store.resolve(id);
  const secret = newPostbackSecret();
  let mode: PostbackMode = 'token';
  await store.update(id, async (row, t) => {
    mode = options.mode ?? row.postback_mode;
    const stored = storedSecret(store, id, mode, secret);
    const now = store.deps.clock.now();
    const keepPrevious = grace > 0 && row.postback_secret !== null;
    await store.deps.db.execute(
      'UPDATE networks SET postback_mode = ?, postback_secret = ?, postback_secret_set_at = ?, postback_previous_secret = ?, postback_previous_until = ?, updated_at = ? WHERE id = ?',
      [mode, stored, now, keepPrevious ? row.postback_secret : null, keepPrevious ? new Date(now.getTime() + grace * 3_600_000) : null, now, id],
      t,
    );
  });
  store.deps.secrets?.add(secret);
  store.deps.logger.info('networks', 'Postback secret rotated', { network: id, mode, grace_hours: grace, actor });
  return { secret, mode };
}

function secretMissing(id: string): ServiceError {
  return new ServiceError(
    'svc_postback_secret_missing',
    `Network ${id} has no postback secret yet: \`cashtrack networks postbacks ${id} on\` (or POST /networks/${id}/postback) makes one and switches postbacks on; \`cashtrack networks postback-secret ${id} --rotate\` only makes one.`,
    409,
    { network: id },
  );
}
