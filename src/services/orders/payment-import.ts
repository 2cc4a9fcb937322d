// A network's payment report uploaded as CSV (`POST /networks/{id}/payments/import`, `cashtrack
// networks import-payments`): read with csv-parse by the columns the network's definition names
// (its `payments` mapping), then recorded line by line as any payment source is (source `import`),
// with each line's outcome and its line number in the answer.
import { parse as parseCsv } from 'csv-parse/sync';
import { ServiceError } from '../../errors.js';
import type { PaymentsMapping } from '../../networks/custom-definition.js';
import { parseDate } from '../../networks/values.js';
import type { PaymentLine, PaymentResult, PaymentSummary } from './payments.js';

/** Rows one upload may hold. */
export const MAX_IMPORT_ROWS = 50_000;

export type ImportSummary = Omit<PaymentSummary, 'results'> & { results: (PaymentResult & { line: number })[] };

/** The payment lines of a report, each with its line number in the file. 400 svc_invalid_csv when it cannot be read by the mapping. */
export function readPaymentReport(text: string, mapping: PaymentsMapping): { lines: PaymentLine[]; lineNumbers: number[] } {
  let rows: { record: Record<string, string>; info: { lines: number } }[];
  try {
    rows = parseCsv(text, {
      bom: true,
      columns: (header: string[]) => header.map((h) => h.trim()),
      delimiter: mapping.delimiter ?? ',',
      skip_empty_lines: true,
      relax_column_count: true,
      trim: true,
      info: true,
      to: MAX_IMPORT_ROWS + 1,
    }) as unknown as typeof rows;
  } catch (err) {
    throw new ServiceError('svc_invalid_csv', `The file is not valid CSV: ${(err as Error).message.slice(0, 300)}`, 400);
  }
  if (rows.length > MAX_IMPORT_ROWS) throw new ServiceError('svc_invalid_csv', `The file has more than ${MAX_IMPORT_ROWS} rows: split it.`, 400);
  const header = rows.length ? Object.keys(rows[0].record) : [];
  const f = mapping.fields;
  const missing = (['transaction_id', 'payment_id', 'amount', 'currency', 'paid_at'] as const).filter((k) => f[k] && rows.length && !header.includes(f[k]!));
  if (missing.length)
    throw new ServiceError(
      'svc_invalid_csv',
      `The file has no column ${missing.map((k) => `"${f[k]}" (${k})`).join(', ')}: its header is ${header.slice(0, 20).join(', ') || '(empty)'}.`,
      400,
      { missing },
    );
  const cell = (r: Record<string, string>, key?: string) => (key && r[key] !== undefined && r[key] !== '' ? r[key] : null);
  return {
    lines: rows.map(({ record: r }) => {
      const paidText = cell(r, f.paid_at);
      const paidAt = paidText === null ? null : parseDate(paidText);
      return {
        transaction_id: cell(r, f.transaction_id) ?? '',
        payment_id: cell(r, f.payment_id) ?? '',
        amount: cell(r, f.amount),
        currency: cell(r, f.currency),
        // An unreadable date is refused by the line check, not taken as "now".
        paid_at: paidText !== null && paidAt === null ? new Date(Number.NaN) : paidAt,
        raw: r,
      };
    }),
    lineNumbers: rows.map((r) => r.info.lines),
  };
}
