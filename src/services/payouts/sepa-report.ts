// The bank's answer to a pain.001: a Customer Payment Status Report (pain.002.001.10, or .03 from
// banks still on the 2009 messages), read with a strict XML parser (fast-xml-parser: it checks the
// document is well-formed first and never resolves external entities). Pure: it says what the
// report says, per item; the batch applies it.
//
// Statuses (ISO 20022 ExternalPaymentTransactionStatus1Code) and what we make of them:
//   ACSC settlement completed, ACSP settlement in process, ACWC accepted with change → paid: the
//        debtor's bank has taken the transfer for execution and the money has left (or is leaving)
//        the account; a later return comes back as a new credit, not as a change to this report.
//   ACCP accepted (customer profile), ACTC accepted (technical validation), RCVD received, PDNG
//        pending, PART (a group or payment only) → pending: checked, not yet executed, and it can
//        still fail (a future execution date, funds).
//   RJCT rejected → failed, with the reason code and the bank's additional text.
// A transaction's own status wins; an item the report does not list takes the status of its
// payment (PmtInfSts), else of the group (GrpSts), when the caller names the batch's items.
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { ServiceError } from '../../errors.js';
import type { ItemResult } from './sepa.js';

export interface StatusReport {
  /** The MsgId of the pain.001 the report answers. */
  original_msg_id: string;
  /** `pain.002.001.10` or `pain.002.001.03`. */
  version: string;
  /** The group's status, when the report gives one. */
  group_status: string | null;
  results: ItemResult[];
}

const VERSIONS = ['10', '03'];
const NS = 'urn:iso:std:iso:20022:tech:xsd:pain.002.001.';
/** A report larger than this is not one for a batch we made. */
export const MAX_REPORT_BYTES = 10 * 1024 * 1024;

const PAID = new Set(['ACSC', 'ACSP', 'ACWC']);
const PENDING = new Set(['ACCP', 'ACTC', 'RCVD', 'PDNG', 'PART']);

/** The reason codes banks give most (ISO 20022 ExternalStatusReason1Code), in words. */
const REASONS: Record<string, string> = {
  AC01: 'incorrect account number',
  AC04: 'closed account',
  AC06: 'blocked account',
  AC13: 'invalid debtor account type',
  AG01: 'transaction forbidden on this account',
  AG02: 'invalid bank operation code',
  AM04: 'insufficient funds',
  AM05: 'duplicate',
  BE04: 'missing creditor address',
  CNOR: "creditor's bank not registered",
  DNOR: "debtor's bank not registered",
  DUPL: 'duplicate payment',
  FF01: 'invalid file format',
  MD07: 'end customer deceased',
  MS02: 'reason not specified by the customer',
  MS03: 'reason not specified by the bank',
  RC01: 'incorrect bank identifier (BIC)',
  RR01: 'missing debtor account or identification',
  RR02: "missing debtor's name or address",
  RR03: "missing creditor's name or address",
  RR04: 'regulatory reason',
  TM01: 'received after the cut-off time',
};

type Node = Record<string, unknown>;

const invalid = (message: string) => new ServiceError('svc_sepa_report_invalid', `The file is not a readable pain.002 status report: ${message}`, 400);

/** Elements that may repeat, read as arrays whatever their count. */
const REPEATED = new Set(['OrgnlPmtInfAndSts', 'TxInfAndSts', 'StsRsnInf', 'AddtlInf']);

const text = (v: unknown): string | null => {
  if (typeof v === 'string') return v.trim() || null;
  if (v && typeof v === 'object' && typeof (v as Node)['#text'] === 'string') return ((v as Node)['#text'] as string).trim() || null;
  return null;
};
const node = (v: unknown): Node | null => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Node) : null);
const nodes = (v: unknown): Node[] => (Array.isArray(v) ? v.map(node).filter((n): n is Node => n !== null) : []);

/** "AC04 (closed account): Konto erloschen" from the status reasons of one level. */
function reasonOf(infos: Node[]): string | null {
  const parts = infos.map((info) => {
    const rsn = node(info.Rsn);
    const code = text(rsn?.Cd) ?? text(rsn?.Prtry);
    const words = code ? REASONS[code] : undefined;
    const extra = (Array.isArray(info.AddtlInf) ? info.AddtlInf : []).map(text).filter(Boolean).join(' ');
    const head = code ? `${code}${words ? ` (${words})` : ''}` : '';
    return [head, extra].filter(Boolean).join(': ');
  });
  const out = parts.filter(Boolean).join('; ');
  return out ? out.slice(0, 500) : null;
}

/** One status with its reasons as an item's outcome; null when there is no status. */
function outcomeOf(status: string | null, reason: string | null): Pick<ItemResult, 'outcome' | 'reason'> | null {
  if (!status) return null;
  if (status === 'RJCT') return { outcome: 'failed', reason: reason ?? 'RJCT: rejected by the bank without a reason' };
  if (PAID.has(status)) return { outcome: 'paid', reason: null };
  if (PENDING.has(status)) return { outcome: 'pending', reason };
  return { outcome: 'pending', reason: `unknown status ${status.slice(0, 8)}${reason ? `: ${reason}` : ''}` };
}

/**
 * The results of a pain.002 report, matched by OrgnlEndToEndId (the item's reference). With
 * `itemRefs` (the batch's items), an item the report does not list takes its payment's, else the
 * group's status (a whole file rejected, or accepted, at once). Anything but a well-formed
 * pain.002.001.10 or .03 report on a pain.001, or one that gives the same item two outcomes, is a
 * 400 `svc_sepa_report_invalid`.
 */
export function pain002(xml: string, itemRefs: readonly string[] = []): StatusReport {
  if (typeof xml !== 'string' || !xml.trim()) throw invalid('it is empty.');
  if (Buffer.byteLength(xml) > MAX_REPORT_BYTES) throw invalid(`it is larger than ${MAX_REPORT_BYTES / 1024 / 1024} MiB.`);
  if (/<!DOCTYPE/i.test(xml)) throw invalid('it has a document type declaration, which a status report never has.');
  const wellFormed = XMLValidator.validate(xml);
  if (wellFormed !== true) throw invalid(`${wellFormed.err.msg} (line ${wellFormed.err.line}).`);
  const options = { ignoreAttributes: false, parseTagValue: false, parseAttributeValue: false, processEntities: true, htmlEntities: false };
  let raw: Node;
  let doc: Node;
  try {
    raw = new XMLParser(options).parse(xml) as Node;
    doc = new XMLParser({ ...options, removeNSPrefix: true, isArray: (name) => REPEATED.has(name) }).parse(xml) as Node;
  } catch (e) {
    throw invalid(`${(e as Error).message.slice(0, 200)}.`);
  }
  const roots = Object.keys(raw).filter((k) => k !== '?xml');
  if (roots.length !== 1) throw invalid('it does not have one root element.');
  const [prefix, local] = roots[0].includes(':') ? roots[0].split(':') : [null, roots[0]];
  const ns = text(node(raw[roots[0]])?.[prefix ? `@_xmlns:${prefix}` : '@_xmlns']) ?? '';
  const version = ns.startsWith(NS) ? ns.slice(NS.length) : '';
  if (local !== 'Document' || !VERSIONS.includes(version)) throw invalid(`its root is not a Document of ${NS}10 or ${NS}03.`);
  const report = node(node(doc.Document)?.CstmrPmtStsRpt);
  const group = node(report?.OrgnlGrpInfAndSts);
  const original = text(group?.OrgnlMsgId);
  if (!report || !group || !original) throw invalid('it has no original message id (CstmrPmtStsRpt/OrgnlGrpInfAndSts/OrgnlMsgId).');
  const answered = text(group.OrgnlMsgNmId) ?? '';
  if (!/^pain\.001\./.test(answered)) throw invalid(`it answers a ${answered.slice(0, 40) || 'message of no name'}, not a pain.001 credit transfer.`);

  const groupStatus = text(group.GrpSts);
  const groupOutcome = outcomeOf(groupStatus, reasonOf(nodes(group.StsRsnInf)));
  const results = new Map<string, ItemResult>();
  let paymentOutcome: ReturnType<typeof outcomeOf> = null;
  for (const payment of nodes(report.OrgnlPmtInfAndSts)) {
    paymentOutcome ??= outcomeOf(text(payment.PmtInfSts), reasonOf(nodes(payment.StsRsnInf)));
    for (const tx of nodes(payment.TxInfAndSts)) {
      const ref = text(tx.OrgnlEndToEndId);
      const status = text(tx.TxSts);
      const outcome = outcomeOf(status, reasonOf(nodes(tx.StsRsnInf)));
      if (!ref || !outcome) continue;
      const result: ItemResult = { item_ref: ref, ...outcome, reference: text(tx.AcctSvcrRef) ?? text(tx.StsId) };
      const before = results.get(ref);
      if (before && before.outcome !== result.outcome)
        throw invalid(`it gives the item ${ref.slice(0, 35)} two outcomes (${before.outcome} and ${result.outcome}).`);
      results.set(ref, result);
    }
  }
  const fallback = paymentOutcome ?? groupOutcome;
  if (fallback) for (const ref of itemRefs) if (!results.has(ref)) results.set(ref, { item_ref: ref, ...fallback, reference: null });
  return { original_msg_id: original, version: `pain.002.001.${version}`, group_status: groupStatus, results: [...results.values()] };
}
