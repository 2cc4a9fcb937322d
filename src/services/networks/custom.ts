// Custom networks, defined as data: creating or updating one's definition (an update keeps what
// it does not send), and the network's cashback rule its definition carries.
import { ServiceError } from '../../errors.js';
import { checkDefinition, mergeDefinition, movedSecrets, REQUIRED_DEFINITION_FIELDS, secretDestinations } from '../../networks/custom-definition.js';
import { own } from '../../objects.js';
import { NETWORK_ID } from '../../fields.js';
import type { NetworkRow } from './rows.js';
import { fromConfig } from './settings.js';
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
    if (existing?.definition) refuseMovedSecrets(store, id, existing, def);
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

/**
 * A secret setting is bound to the origin its feeds sent it to when it was given: a definition
 * whose feeds would send it to another host is refused (400 svc_secret_origin_changed), as a
 * built-in network's base_url change is. The definition cannot carry the secret itself, so the
 * way on is to remove it, save, and give it again for the new host.
 */
function refuseMovedSecrets(store: NetworkStore, id: string, existing: NetworkRow, def: ReturnType<typeof checkDefinition>): void {
  const configured = fromConfig(store, id);
  const plain = { ...configured, ...existing.settings };
  const moved = movedSecrets(secretDestinations(existing.definition!, plain), secretDestinations(def, plain), (name) =>
    Boolean(existing.secret_names.includes(name) || configured[name]),
  );
  if (!moved.length) return;
  const names = moved.map((m) => m.name);
  throw new ServiceError(
    'svc_secret_origin_changed',
    `This definition would send ${names.join(', ')} to ${moved[0].to} instead of ${moved[0].from}, the origin ${names.length > 1 ? 'they were' : 'it was'} given for: remove ${names.length > 1 ? 'them' : 'it'} first (\`cashtrack networks configure ${id} --unset NAME\` or POST /networks/${id}/settings with null), save the definition, then give ${names.length > 1 ? 'them' : 'it'} again.`,
    400,
    { field: 'feeds', secrets: names, from: moved[0].from, to: moved[0].to },
  );
}

function notCustom(id: string): ServiceError {
  return new ServiceError(
    'svc_network_not_custom',
    `${id} is a built-in network: configure it with \`cashtrack networks configure ${id} --set key=value\` instead.`,
    409,
    { network: id },
  );
}
