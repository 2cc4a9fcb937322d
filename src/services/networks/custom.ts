// Custom networks, defined as data: creating or updating one's definition (an update keeps what
// it does not send), and the network's cashback rule its definition carries.
import { ServiceError } from '../../errors.js';
import { checkDefinition, mergeDefinition, REQUIRED_DEFINITION_FIELDS } from '../../networks/custom-definition.js';
import { own } from '../../objects.js';
import { NETWORK_ID } from '../../fields.js';
import type { NetworkStore } from './store.js';

/** Checks and writes a custom network for NetworkService.saveCustom (which then reads it back); whether it was created. */
export async function saveCustomDefinition(store: NetworkStore, id: string, input: unknown, actor: string): Promise<boolean> {
  if (typeof id !== 'string' || !NETWORK_ID.test(id)) {
    throw new ServiceError('svc_invalid_network', 'The network id must be 1 to 64 lower-case letters, digits, - or _, starting with a letter or digit.', 400, {
      params: { id: 'invalid network id' },
    });
  }
  if (store.byId.has(id)) throw notCustom(id);
  if (input === null || typeof input !== 'object' || Array.isArray(input)) checkDefinition(input);
  const update = input as Record<string, unknown>;
  const now = store.deps.clock.now();
  const { created, def } = await store.deps.db.transaction(async (t) => {
    const existing = await store.lockRow(id, t);
    if (existing && existing.kind !== 'custom') throw notCustom(id);
    if (!existing) {
      const missing = REQUIRED_DEFINITION_FIELDS.filter((f) => own(update, f) === undefined);
      if (missing.length) throw new ServiceError('rest_missing_callback_param', `Missing parameter(s): ${missing.join(', ')}`, 400, { params: missing });
    }
    const def = checkDefinition(existing ? mergeDefinition({ ...(existing.definition ?? {}) }, update) : update);
    if (existing?.postbacks_enabled && !def.postback) {
      throw new ServiceError(
        'svc_postback_no_mapping',
        `Postbacks are switched on for ${id}: switch them off (\`cashtrack networks postbacks ${id} off\`) before removing its postback mapping, or every postback would be refused.`,
        409,
        { network: id },
      );
    }
    const { cashback: _rule, ...stored } = def;
    await store.changed(id, t);
    if (existing) {
      await store.deps.db.execute(
        'UPDATE networks SET name = ?, currency = ?, definition = ?, updated_at = ? WHERE id = ?',
        [def.name, def.currency, JSON.stringify(stored), now, id],
        t,
      );
      return { created: false, def };
    }
    await store.deps.db.execute(
      "INSERT INTO networks (id, kind, name, currency, enabled, postbacks_enabled, definition, postback_mode, created_at, updated_at) VALUES (?, 'custom', ?, ?, ?, ?, ?, 'token', ?, ?)",
      [id, def.name, def.currency, true, false, JSON.stringify(stored), now, now],
      t,
    );
    return { created: true, def };
  });
  // An update that does not send `cashback` keeps the network's rule; null (or a new network without one) is the site default.
  const sentRule = own(update, 'cashback') !== undefined;
  if (def.cashback) await store.deps.cashback.set(id, null, def.cashback.type, def.cashback.value, def.cashback.currency ?? null, actor);
  else if (created || sentRule) await store.deps.cashback.remove(id, null, actor);
  store.deps.logger.info('networks', created ? 'Custom network created' : 'Custom network updated', {
    network: id,
    name: def.name,
    fields: Object.keys(update)
      .filter((k) => own(update, k) !== undefined)
      .slice(0, 20),
    actor,
  });
  return created;
}

function notCustom(id: string): ServiceError {
  return new ServiceError(
    'svc_network_not_custom',
    `${id} is a built-in network: configure it with \`cashtrack networks configure ${id} --set key=value\` instead.`,
    409,
    { network: id },
  );
}
