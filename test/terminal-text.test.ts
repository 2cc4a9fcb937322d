import { describe, expect, it } from 'vitest';
import { terminalJson, terminalLine, terminalText } from '../src/terminal-text.js';
import { expectPlain, HOSTILE, HOSTILE_SHOWN } from './helpers/terminal.js';

describe('text for a terminal', () => {
  it('removes OSC 52, OSC 8, OSC 0, CSI, 8-bit CSI/OSC/DCS, bare C0 and C1 controls and DEL, whole sequences with their parameters', () => {
    expect(terminalText(HOSTILE)).toBe(HOSTILE_SHOWN);
    expect(terminalLine(HOSTILE)).toBe(HOSTILE_SHOWN);
  });

  it('keeps line feeds and tabs in text, and shows them as one space on a line; a lone carriage return goes', () => {
    expect(terminalText('one\r\ntwo\tcols\rback')).toBe('one\ntwo\tcolsback');
    expect(terminalLine('one\r\ntwo\tcols\rback')).toBe('one two colsback');
  });

  it('keeps the text of a sequence left open, so one field cannot hide what follows it', () => {
    expect(terminalText('title\u001b]0;hidden? no')).toBe('title0;hidden? no');
    expect(terminalText('a\u009d8;;x b')).toBe('a8;;x b');
    expect(terminalText('a\u001b')).toBe('a');
  });

  it('leaves ordinary text alone, accents, emoji and right-to-left scripts included', () => {
    const text = 'Café – 10 % cashback 🎉 שלום [ok] ~ \\ ^_^';
    expect(terminalText(text)).toBe(text);
    expect(terminalLine(text)).toBe(text);
  });

  it('is idempotent', () => {
    for (const s of [HOSTILE, 'a\u001b\u001b[31m]0;x\u0007b', '\u009b\u009b1m']) expect(terminalText(terminalText(s))).toBe(terminalText(s));
  });

  it('writes JSON with every control escaped, C1, DEL and line separators included, that parses back to the same value', () => {
    const value = { s: `${HOSTILE}\u2028\u2029\n\t`, list: [HOSTILE], n: 1, none: null };
    const json = terminalJson(value, 2);
    expectPlain(json.replace(/\n {0,4}/g, ''));
    expect(json).toContain('\\u009b31mG\\u009d');
    expect(json).toContain('\\u2028\\u2029');
    expect(JSON.parse(json)).toEqual(value);
    expect(terminalJson(undefined)).toBe('null');
  });
});
