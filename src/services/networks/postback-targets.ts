// The postback endpoint's view of each network, kept per process: read again only when the
// `networks_revision` setting moved (every write of a network row bumps it in its transaction),
// so a postback costs no read of its network while nothing changed. Opened HMAC secrets are kept
// beside it, by ciphertext.
import type { Database } from '../../db/database.js';
import type { Transaction } from '../../db/transaction.js';
import type { NetworkModule, PostbackFields } from '../../networks/types.js';
import type { SecretBox } from '../../keys.js';
import type { SecretValues } from '../../secret-values.js';
import type { SettingsService } from '../settings/index.js';
import type { PostbackMode } from './postback-secrets.js';
import { NETWORK_ID } from '../../fields.js';
import { NETWORK_COLUMNS, toNetworkRow, type NetworkRow } from './rows.js';

/** What the postback endpoint needs of a network: its module, switches and credentials. */
export interface PostbackTarget {
  id: string;
  kind: 'builtin' | 'custom';
  module: NetworkModule;
  postbacksEnabled: boolean;
  mode: PostbackMode;
  /** `h1:` keyed token hash or `e1:` sealed HMAC secret; null when none was generated. */
  secret: string | null;
  previousSecret: string | null;
  previousUntil: Date | null;
  ipAllowlist: string[];
  /** Custom networks: which parameter carries which field (for error messages). */
  mapping?: Partial<Record<keyof PostbackFields, string>>;
}

/**
 * The settings row every write of a `networks` row bumps in its transaction, so each process can
 * tell whether the postback targets it keeps are still current (see postbackTarget).
 */
const REVISION_SETTING = 'networks_revision';
/** Postback targets and opened HMAC secrets kept per process, at most. */
const MAX_CACHED = 256;

/** A network as the postback endpoint sees it, and the `networks_revision` that view is current at. */
export interface PostbackView {
  target: PostbackTarget | null;
  revision: string;
}

export interface PostbackTargetsDeps {
  db: Database;
  settings: SettingsService;
  box: SecretBox;
  secrets?: SecretValues;
  /** The module of network `id` (built-in, or defined by its row); null when there is none. */
  moduleOf: (id: string, row: NetworkRow | null) => { module: NetworkModule; builtin: boolean } | null;
}

/** The postback targets and opened HMAC secrets this process keeps (see the file's header). */
export class PostbackTargets {
  /** The postback endpoint's view of each network, with the `networks_revision` it was read under. */
  private readonly targets = new Map<string, PostbackView>();
  /** Opened HMAC secrets by network and ciphertext (a new secret is a new ciphertext). */
  private readonly opened = new Map<string, string>();

  constructor(private readonly deps: PostbackTargetsDeps) {}

  /**
   * The postback endpoint's view of a network (a null target when there is no such network),
   * with the revision it is current at. The revision is read after the call began, so a change
   * committed before a postback arrives is seen by it, as with a fresh read of the row.
   */
  async view(id: string): Promise<PostbackView> {
    if (typeof id !== 'string' || !NETWORK_ID.test(id)) return { target: null, revision: '' };
    const revision = await this.revision();
    const cached = this.targets.get(id);
    if (cached && cached.revision === revision) return cached;
    const target = await this.read(id);
    if (this.targets.size >= MAX_CACHED) this.targets.clear();
    // Read after `revision`: at least as new as it (a later write only makes the next call read again).
    const view = { revision, target };
    this.targets.set(id, view);
    return view;
  }

  /**
   * The view kept of a network, without reading anything (undefined when none is kept). It may
   * be stale: whoever acts on it checks `revision()` first.
   */
  kept(id: string): PostbackView | undefined {
    return typeof id === 'string' && NETWORK_ID.test(id) ? this.targets.get(id) : undefined;
  }

  /** The current `networks_revision` (read after the call began; concurrent callers share reads). */
  revision(): Promise<string> {
    return this.deps.settings.revision(REVISION_SETTING);
  }

  /** Opens a sealed HMAC secret of a network (kept opened, by ciphertext). */
  openSecret(id: string, sealed: string): string {
    const key = `${id}\0${sealed}`;
    const known = this.opened.get(key);
    if (known !== undefined) return known;
    const plain = this.deps.box.open(sealed, `network:${id}:postback`);
    this.deps.secrets?.add(plain);
    if (this.opened.size >= MAX_CACHED) this.opened.clear();
    this.opened.set(key, plain);
    return plain;
  }

  /** A network row changes in `t`: every process reads its postback target again once `t` commits. */
  async changed(id: string, t: Transaction): Promise<void> {
    this.targets.delete(id);
    await this.deps.settings.bumpRevision(REVISION_SETTING, t);
  }

  private async read(id: string): Promise<PostbackTarget | null> {
    const [r] = await this.deps.db.select<Record<string, unknown>>(`SELECT ${NETWORK_COLUMNS} FROM networks WHERE id = ?`, [id]);
    const row = r ? toNetworkRow(r) : null;
    const found = this.deps.moduleOf(id, row);
    if (!found) return null;
    return {
      id,
      kind: found.builtin ? 'builtin' : 'custom',
      module: found.module,
      postbacksEnabled: row?.postbacks_enabled ?? false,
      mode: row?.postback_mode ?? 'token',
      secret: row?.postback_secret ?? null,
      previousSecret: row?.postback_previous_secret ?? null,
      previousUntil: row?.postback_previous_until ? new Date(row.postback_previous_until) : null,
      ipAllowlist: row?.postback_ip_allowlist ?? [],
      mapping: found.builtin ? undefined : (row?.definition?.postback?.params ?? {}),
    };
  }
}
