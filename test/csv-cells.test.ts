import { describe, expect, it } from 'vitest';
import { csvText, neutraliseCell } from '../src/csv-cells.js';

describe('CSV cells', () => {
  it('neutralises every formula-looking start and keeps plain numbers', () => {
    for (const bad of ['=1+1', '+cmd', '-2+3', '@SUM(A1)', '\tx', '\rx', '=HYPERLINK("http://x")']) {
      expect(neutraliseCell(bad)).toBe(`'${bad}`);
    }
    for (const ok of ['-12.50', '+3', '42', 'Ann', 'a=b', '', 'x-1']) expect(neutraliseCell(ok)).toBe(ok);
    expect(neutraliseCell(null)).toBe('');
    expect(neutraliseCell(-5)).toBe('-5');
  });

  it('writes RFC 4180 with CRLF and quotes what needs quoting', () => {
    const text = csvText(
      ['name', 'amount'],
      [
        ['=cmd|"/c calc"!A1', '-1.00'],
        ['a,b', 'line\nbreak'],
      ],
    );
    expect(text).toBe('name,amount\r\n"\'=cmd|""/c calc""!A1",-1.00\r\n"a,b","line\nbreak"\r\n');
  });
});
