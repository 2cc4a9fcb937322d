// The site's own bank account for SEPA payouts, the debtor of every pain.001 file: its holder's
// name, IBAN, BIC, and the pain.001 version the bank takes. Kept in the settings table under
// 'payouts_sepa' as one JSON block, written only here (`cashtrack payouts sepa-settings`), every
// value checked as it is stored (the IBAN's check digits and country, the BIC, a name left in the
// SEPA character set), so a file is never made from an account that does not exist.
import type { LogService } from '../logs/index.js';
import type { SettingsService } from '../settings/index.js';
import { ServiceError } from '../../errors.js';
import { checkBic, checkIban, needsBic, SEPA_VERSIONS, type SepaDebtor, type SepaVersion } from './sepa.js';
import { sepaText } from './sepa-text.js';

const STORED = 'payouts_sepa';
const NAMES = ['name', 'iban', 'bic', 'version'] as const;
type Name = (typeof NAMES)[number];

/** What `cashtrack payouts sepa-settings` shows. */
export interface SepaSettingsView {
  /** Whether a SEPA file can be made. */
  configured: boolean;
  /** What is still to set. */
  missing: string[];
  /** The account holder's name as given, and as it is written in a file. */
  name: string | null;
  name_in_file: string | null;
  iban: string | null;
  bic: string | null;
  version: SepaVersion;
}

const invalidSetting = (field: Name, message: string) => new ServiceError('svc_invalid_setting', `${field}: ${message}`, 400, { field });

/** Reads and stores the debtor account of SEPA payout files. */
export class SepaSettingsStore {
  constructor(private readonly deps: { settings: SettingsService; logger: LogService }) {}

  /** The stored settings with what is missing. */
  async view(): Promise<SepaSettingsView> {
    const s = this.parse(await this.deps.settings.get(STORED));
    const missing = [...(s.name ? [] : ['name']), ...(s.iban ? [] : ['iban']), ...(s.iban && needsBic(s.iban) && !s.bic ? ['bic'] : [])];
    return {
      configured: missing.length === 0,
      missing,
      name: s.name ?? null,
      name_in_file: s.name ? sepaText(s.name) : null,
      iban: s.iban ?? null,
      bic: s.bic ?? null,
      version: (s.version as SepaVersion | undefined) ?? '09',
    };
  }

  /** The debtor and version of a file, or 409 `svc_sepa_not_configured` naming what to set. */
  async debtor(): Promise<{ debtor: SepaDebtor; version: SepaVersion }> {
    const view = await this.view();
    if (!view.configured)
      throw new ServiceError(
        'svc_sepa_not_configured',
        `No SEPA debtor account is set: set ${view.missing.join(', ')} with \`cashtrack payouts sepa-settings --set ${view.missing[0]}=...\`.`,
        409,
        { missing: view.missing },
      );
    return { debtor: { name: view.name!, iban: view.iban!, bic: view.bic }, version: view.version };
  }

  /**
   * Stores settings (null or '' unsets one; `version` back to 09). Unknown names are 400
   * `svc_unknown_setting`, bad values 400 `svc_invalid_setting`.
   */
  async configure(values: Record<string, string | null>, actor: string): Promise<SepaSettingsView> {
    const stored = this.parse(await this.deps.settings.get(STORED));
    for (const [name, raw] of Object.entries(values)) {
      if (!(NAMES as readonly string[]).includes(name))
        throw new ServiceError('svc_unknown_setting', `SEPA payouts have no setting "${name.slice(0, 64)}". Settings: ${NAMES.join(', ')}.`, 400, {
          field: name.slice(0, 64),
          settings: [...NAMES],
        });
      const field = name as Name;
      const value = typeof raw === 'string' ? raw.trim() : raw;
      if (value === null || value === '') {
        delete stored[field];
        continue;
      }
      if (typeof value !== 'string') throw invalidSetting(field, 'must be text.');
      stored[field] = this.check(field, value);
    }
    await this.deps.settings.set(STORED, JSON.stringify(stored));
    // Names only: an account number has no business in the log.
    this.deps.logger.info('payouts', 'SEPA debtor account configured', { keys: Object.keys(values), actor });
    return this.view();
  }

  private check(field: Name, value: string): string {
    switch (field) {
      case 'name':
        if (value.length > 140 || [...value].some((c) => c < ' ' || c === '\u007f'))
          throw invalidSetting(field, 'must be at most 140 characters, without control characters.');
        if (!sepaText(value)) throw invalidSetting(field, "has no letter or digit of the SEPA character set (Latin letters, digits, / - ? : ( ) . , ' +).");
        return value;
      case 'iban': {
        const out = checkIban(value);
        if ('reason' in out) throw invalidSetting(field, out.reason);
        return out.iban;
      }
      case 'bic': {
        const out = checkBic(value);
        if ('reason' in out) throw invalidSetting(field, out.reason);
        return out.bic;
      }
      case 'version':
        if (!(SEPA_VERSIONS as readonly string[]).includes(value)) throw invalidSetting(field, `must be one of ${SEPA_VERSIONS.join(', ')}.`);
        return value;
    }
  }

  private parse(raw: string | null): Partial<Record<Name, string>> {
    const out: Partial<Record<Name, string>> = {};
    if (!raw) return out;
    try {
      const value = JSON.parse(raw) as Record<string, unknown>;
      for (const name of NAMES) if (typeof value?.[name] === 'string') out[name] = value[name] as string;
    } catch {
      // A damaged row reads as nothing stored: the file is refused as not configured until set again.
    }
    return out;
  }
}
