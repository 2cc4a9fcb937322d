// CSV that finance opens in a spreadsheet: RFC 4180 quoting by csv-stringify, and every cell that
// a spreadsheet would read as a formula (one starting with =, +, -, @, a tab or a carriage return)
// neutralised with a leading apostrophe, as OWASP's CSV-injection advice has it. A cell that is
// only a decimal number ("-12.50", an amount we wrote) cannot be a formula and stays a number.
// Payout files and exports both write through here, so the guard is one function.
import { stringify, type Stringifier } from 'csv-stringify';
import { stringify as stringifySync } from 'csv-stringify/sync';

const FORMULA_START = /^[=+\-@\t\r]/;
const PLAIN_NUMBER = /^[+-]?\d+(\.\d+)?$/;
// A bare LF or CR inside a cell is quoted too, so no reader splits the row there.
const OPTIONS = { record_delimiter: '\r\n', quoted_match: /[\r\n]/ } as const;

/** The cell as a spreadsheet will show it, never evaluate it. */
export function neutraliseCell(value: unknown): string {
  if (value === null || value === undefined) return '';
  const text = String(value);
  return FORMULA_START.test(text) && !PLAIN_NUMBER.test(text) ? `'${text}` : text;
}

/** A whole small file (a payout batch's CSV) as one string: header first, CRLF line ends. */
export function csvText(header: readonly string[], rows: Iterable<readonly unknown[]>): string {
  const cells = [header.map(neutraliseCell)];
  for (const row of rows) cells.push(row.map(neutraliseCell));
  return stringifySync(cells, OPTIONS);
}

/** A streaming writer for large files (exports): write rows, pipe `stream` to a file. */
export function csvStream(header: readonly string[]): {
  stream: Stringifier;
  write(row: readonly unknown[]): boolean;
} {
  const stream = stringify(OPTIONS);
  stream.write(header.map(neutraliseCell));
  return { stream, write: (row) => stream.write(row.map(neutraliseCell)) };
}
