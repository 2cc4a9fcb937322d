// SEPA credit transfers: where a payout goes (an IBAN, maybe a BIC, a name checked before any file
// is made), and the ISO 20022 `pain.001` file that carries a batch of them to the site's bank.
// Pure: no database, no clock; the same batch always gives the same file, byte for byte, so a file
// made twice carries the same message id and the bank refuses the second as a duplicate instead of
// paying twice. The bank's answer, `pain.002`, is read in sepa-report.ts.
import { createRequire } from 'node:module';
import { electronicFormatIBAN, isSEPACountry, validateBIC, validateIBAN, ValidationErrorsIBAN } from 'ibantools';
import type * as XmlBuilder from 'xmlbuilder2';
import type { XMLBuilder } from 'xmlbuilder2/lib/interfaces.js';
import { ServiceError } from '../../errors.js';
import { formatAmount } from '../../money.js';
import type { BatchItem, ItemResult } from './channels.js';
import { isSepaReference, sepaText } from './sepa-text.js';

export type { BatchItem, ItemResult };

// xmlbuilder2 (some 150 modules with its DOM) is loaded when a file is written: every command and
// the daemon's start build the payout services, and only a SEPA batch needs it.
const require = createRequire(import.meta.url);
const xml = () => require('xmlbuilder2') as typeof XmlBuilder;

/** Where a SEPA payout goes: `name` already in the SEPA character set. */
export interface SepaDestination {
  iban: string;
  bic?: string;
  name: string;
}

/** The pain.001 versions we write: `09` (the EPC's since November 2023) or `03` (before). */
export const SEPA_VERSIONS = ['09', '03'] as const;
export type SepaVersion = (typeof SEPA_VERSIONS)[number];

/** The site's own account, the debtor of every transfer. */
export interface SepaDebtor {
  name: string;
  iban: string;
  bic?: string | null;
}

export interface SepaBatch {
  id: number;
  /** ISO 8601; the file's creation time, so the file is the same whenever it is made. */
  created_at: string;
  /** YYYY-MM-DD the bank is asked to execute on; default the batch's creation date (UTC). */
  execution_date?: string | null;
}

/** The SEPA Credit Transfer scheme's bounds on one transfer: 0.01 to 999,999,999.99 EUR. */
export const SEPA_MIN_MINOR = 1;
export const SEPA_MAX_MINOR = 99_999_999_999;

/**
 * The countries of the European Economic Area (with the French overseas departments and Åland,
 * which have IBAN prefixes of their own): a transfer to a SEPA country outside it (Switzerland,
 * the United Kingdom, Monaco, San Marino, ...) must name the creditor's bank by its BIC.
 */
const EEA = new Set('AT BE BG CY CZ DE DK EE ES FI FR GR HR HU IE IS IT LI LT LU LV MT NL NO PL PT RO SE SI SK GF GP MQ RE YT PM BL MF AX'.split(' '));

/**
 * A BIC as both schemas take it: the 2009 schema (pain.001.001.03) refuses a location code starting
 * with 0 (test BICs) or 1 (passive participants, which cannot receive), or ending with O.
 */
const BIC = /^[A-Z]{6}[A-Z2-9][A-NP-Z0-9]([A-Z0-9]{3})?$/;

const IBAN_ERRORS: Partial<Record<ValidationErrorsIBAN, string>> = {
  [ValidationErrorsIBAN.NoIBANCountry]: 'does not start with a known country code',
  [ValidationErrorsIBAN.WrongBBANLength]: 'has the wrong length for its country',
  [ValidationErrorsIBAN.WrongBBANFormat]: "does not have its country's format",
  [ValidationErrorsIBAN.ChecksumNotNumber]: 'has check digits that are not digits',
  [ValidationErrorsIBAN.WrongIBANChecksum]: 'has wrong check digits (a typo?)',
  [ValidationErrorsIBAN.WrongAccountBankBranchChecksum]: 'has a wrong national check digit',
  [ValidationErrorsIBAN.QRIBANNotAllowed]: 'is a QR-IBAN, which only takes QR bills',
};

/** The IBAN in electronic format, or why it is not one a SEPA transfer can go to. */
export function checkIban(input: string): { iban: string } | { reason: string } {
  const iban = electronicFormatIBAN(input) ?? '';
  if (!/^[A-Z]{2}[0-9]{2}[A-Z0-9]{1,30}$/.test(iban)) return { reason: 'The IBAN is not an IBAN: two letters, two digits, then up to 30 letters or digits.' };
  const result = validateIBAN(iban);
  if (!result.valid) {
    const why = result.errorCodes.map((c) => IBAN_ERRORS[c]).filter(Boolean);
    return { reason: `The IBAN ${why.length ? why.join(', and ') : 'is not valid'}.` };
  }
  if (!isSEPACountry(iban.slice(0, 2))) return { reason: `The IBAN is from ${iban.slice(0, 2)}, a country outside SEPA.` };
  return { iban };
}

/** The BIC in capitals, or why it is not one. */
export function checkBic(input: string): { bic: string } | { reason: string } {
  const bic = input.trim().toUpperCase();
  if (!validateBIC(bic).valid || !BIC.test(bic))
    return { reason: 'The BIC is not a BIC a bank can receive on: 8 or 11 letters and digits (bank, country, location, branch).' };
  return { bic };
}

/** Whether a transfer to this IBAN must name the creditor's BIC (a SEPA country outside the EEA). */
export function needsBic(iban: string): boolean {
  return !EEA.has(iban.slice(0, 2));
}

/** `details` read as a JSON object `{iban, bic?, name?}`, or as an IBAN (either format) and an optional BIC. */
function readDetails(details: string): { iban: string; bic?: string; name?: string } | { reason: string } {
  if (details.startsWith('{')) {
    let value: unknown;
    try {
      value = JSON.parse(details);
    } catch {
      return { reason: 'The payment details start with "{" but are not JSON: give {"iban": ..., "bic": ..., "name": ...} or an IBAN.' };
    }
    const o = value as Record<string, unknown>;
    if (!o || typeof o !== 'object' || Array.isArray(o) || typeof o.iban !== 'string')
      return { reason: 'The payment details are JSON without an "iban" text.' };
    for (const k of ['bic', 'name'] as const)
      if (o[k] !== undefined && o[k] !== null && typeof o[k] !== 'string') return { reason: `The payment details' "${k}" is not text.` };
    return { iban: o.iban, ...(o.bic ? { bic: o.bic as string } : {}), ...(typeof o.name === 'string' && o.name.trim() ? { name: o.name } : {}) };
  }
  // "IBAN: DE89 3704 0044 0532 0130 00, BIC: COBADEFFXXX" and the like: labels and separators go;
  // a last word of 8 or 11 characters is the BIC (an IBAN's print-format groups have at most 4).
  const words = details
    .replace(/\b(IBAN|BIC|SWIFT)\b\s*:?/gi, ' ')
    .split(/[\s,;]+/)
    .filter(Boolean);
  const last = words.at(-1) ?? '';
  if (words.length > 1 && (last.length === 8 || last.length === 11) && /^[A-Za-z]{6}/.test(last)) return { iban: words.slice(0, -1).join(''), bic: last };
  return { iban: words.join('') };
}

/**
 * The IBAN (electronic format) of payment details when they name a valid one of a SEPA country (as
 * JSON, or in print format with labels and a BIC), else null: how SEPA destinations are compared
 * between members.
 */
export function sepaIbanOf(details: string | null): string | null {
  const text = details?.trim();
  if (!text) return null;
  const read = readDetails(text);
  if ('reason' in read) return null;
  const iban = checkIban(read.iban);
  return 'iban' in iban ? iban.iban : null;
}

/**
 * Where a payout goes by SEPA, or the reason it cannot go (the batch holds it out with that
 * reason): EUR only, within the scheme's amount bounds, an IBAN of a SEPA country with right check
 * digits and length, a BIC that is one (required outside the EEA), and a creditor name left in the
 * SEPA character set (the details' `name`, else the member's display name, else the login).
 */
export function sepaDestination(item: BatchItem): SepaDestination | { reason: string } {
  if (item.currency !== 'EUR') return { reason: `A SEPA credit transfer is in EUR; this payout is in ${item.currency}.` };
  if (!Number.isSafeInteger(item.amount_minor) || item.amount_minor < SEPA_MIN_MINOR || item.amount_minor > SEPA_MAX_MINOR)
    return { reason: 'A SEPA credit transfer is between 0.01 and 999999999.99 EUR.' };
  if (!isSepaReference(item.item_ref)) return { reason: 'The batch item reference cannot be a SEPA end-to-end id.' };
  const details = item.details?.trim();
  if (!details) return { reason: 'The payout has no payment details: give the IBAN (and the BIC outside the EEA).' };
  const read = readDetails(details);
  if ('reason' in read) return read;
  const iban = checkIban(read.iban);
  if ('reason' in iban) return iban;
  let bic: string | undefined;
  if (read.bic) {
    const checked = checkBic(read.bic);
    if ('reason' in checked) return checked;
    bic = checked.bic;
  } else if (needsBic(iban.iban)) return { reason: `The IBAN is from ${iban.iban.slice(0, 2)}, outside the EEA: a transfer there needs the bank's BIC.` };
  const name = sepaText(read.name ?? (item.display_name.trim() || item.login));
  if (!name) return { reason: 'The creditor name has no letter or digit of the SEPA character set: give a "name" in Latin letters in the details.' };
  return { iban: iban.iban, ...(bic ? { bic } : {}), name };
}

/** The namespace of a pain.001 version. */
export const painNamespace = (version: SepaVersion) => `urn:iso:std:iso:20022:tech:xsd:pain.001.001.${version}`;

/** The file's MsgId and its one PmtInfId: from the batch id alone, so they are stable. */
export const sepaMessageId = (batchId: number) => `CASHTRACK-BATCH-${batchId}`;
const paymentInfoId = (batchId: number) => `${sepaMessageId(batchId)}-1`;

/**
 * The Customer Credit Transfer Initiation for a batch: one payment (PmtInf) from the debtor's
 * account, one transaction per item (EndToEndId = the item's reference), service level SEPA,
 * charges shared (SLEV). Version 09 by default, 03 for banks that still need it. Every item is
 * checked again (`sepaDestination`); one that fails is a 409 `svc_sepa_item_invalid`, since the
 * batch should have held it out.
 */
export function pain001(batch: SepaBatch, debtor: SepaDebtor, items: readonly BatchItem[], version: SepaVersion = '09'): string {
  if (items.length === 0) throw new ServiceError('svc_sepa_empty_batch', 'A SEPA file needs at least one payout.', 409, { batch_id: batch.id });
  const checked = items.map((item) => {
    const to = sepaDestination(item);
    if ('reason' in to)
      throw new ServiceError('svc_sepa_item_invalid', `Payout ${item.payout_id} cannot go by SEPA: ${to.reason}`, 409, {
        payout_id: item.payout_id,
        reason: to.reason,
      });
    return { item, to };
  });
  const refs = new Set(items.map((i) => i.item_ref));
  if (refs.size !== items.length) throw new ServiceError('svc_sepa_item_invalid', 'Two items of the batch share a reference.', 409, { batch_id: batch.id });
  const created = new Date(batch.created_at);
  if (Number.isNaN(created.getTime())) throw new RangeError(`batch ${batch.id} has no valid created_at`);
  const date = batch.execution_date ?? created.toISOString().slice(0, 10);
  if (!/^\d{4}-\d{2}-\d{2}$/.test(date)) throw new RangeError(`batch ${batch.id} has an execution date that is not YYYY-MM-DD`);
  const debtorName = sepaText(debtor.name);
  // The settings store checks both as they are stored; a debtor from anywhere else is checked here.
  const debtorIban = checkIban(debtor.iban);
  const missing = [...(debtorName ? [] : ['name']), ...('reason' in debtorIban ? ['iban'] : [])];
  if (missing.length)
    throw new ServiceError('svc_sepa_not_configured', `The SEPA debtor account is not usable: set a valid ${missing.join(' and ')}.`, 409, { missing });
  const total = formatAmount(
    checked.reduce((sum, c) => sum + BigInt(c.item.amount_minor), 0n),
    'EUR',
  );
  const count = String(items.length);
  const v09 = version === '09';
  const agent = (parent: XMLBuilder, name: string, bic: string | null | undefined) => {
    const id = parent.ele(name).ele('FinInstnId');
    // Without a BIC (an EEA account: IBAN-only), the debtor's agent is "not provided", as the EPC says.
    if (bic) id.ele(v09 ? 'BICFI' : 'BIC').txt(bic);
    else id.ele('Othr').ele('Id').txt('NOTPROVIDED');
  };

  const root = xml().create({ version: '1.0', encoding: 'UTF-8' }).ele(painNamespace(version), 'Document').ele('CstmrCdtTrfInitn');
  const header = root.ele('GrpHdr');
  header.ele('MsgId').txt(sepaMessageId(batch.id));
  header.ele('CreDtTm').txt(created.toISOString().slice(0, 19));
  header.ele('NbOfTxs').txt(count);
  header.ele('CtrlSum').txt(total);
  header.ele('InitgPty').ele('Nm').txt(debtorName);

  const payment = root.ele('PmtInf');
  payment.ele('PmtInfId').txt(paymentInfoId(batch.id));
  payment.ele('PmtMtd').txt('TRF');
  payment.ele('NbOfTxs').txt(count);
  payment.ele('CtrlSum').txt(total);
  payment.ele('PmtTpInf').ele('SvcLvl').ele('Cd').txt('SEPA');
  // pain.001.001.09 made the execution date a choice of a date or a date and time.
  if (v09) payment.ele('ReqdExctnDt').ele('Dt').txt(date);
  else payment.ele('ReqdExctnDt').txt(date);
  payment.ele('Dbtr').ele('Nm').txt(debtorName);
  payment
    .ele('DbtrAcct')
    .ele('Id')
    .ele('IBAN')
    .txt((debtorIban as { iban: string }).iban);
  agent(payment, 'DbtrAgt', debtor.bic);
  payment.ele('ChrgBr').txt('SLEV');
  for (const { item, to } of checked) {
    const tx = payment.ele('CdtTrfTxInf');
    tx.ele('PmtId').ele('EndToEndId').txt(item.item_ref);
    tx.ele('Amt').ele('InstdAmt', { Ccy: 'EUR' }).txt(formatAmount(item.amount_minor, 'EUR'));
    if (to.bic)
      tx.ele('CdtrAgt')
        .ele('FinInstnId')
        .ele(v09 ? 'BICFI' : 'BIC')
        .txt(to.bic);
    tx.ele('Cdtr').ele('Nm').txt(to.name);
    tx.ele('CdtrAcct').ele('Id').ele('IBAN').txt(to.iban);
    tx.ele('RmtInf')
      .ele('Ustrd')
      .txt(sepaText(`${debtorName} payout ${item.payout_id}`, 140));
  }
  return root.end({ prettyPrint: true });
}
