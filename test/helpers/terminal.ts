// Text that tries to drive the terminal it is printed on, as a network feed, a request or the AI
// provider could send it, and the check that printed output obeys none of it.
import { expect } from 'vitest';

/**
 * Every kind of sequence between the letters A to M: OSC 52 (clipboard write), OSC 8 (a hidden
 * link), OSC 0 (window title) ended by BEL or ST, CSI (clear screen, colour), 8-bit CSI, OSC and
 * DCS, bare C0 (BEL, BS, CR), DEL, a two-byte ESC sequence, a charset switch, and an OSC never
 * terminated.
 */
export const HOSTILE =
  'A\u001b]52;c;ZXZpbA==\u0007B\u001b]8;;https://evil.example/\u001b\\C\u001b]8;;\u001b\\D\u001b]0;pwned\u0007E\u001b[2J\u001b[31mF\u009b31mG\u009d0;t\u009cH\u0090dcs\u009cI\u0007\u0008\u007fJ\u001bcK\u001b(BL\rM\u001b]0;unterminated';
/** What HOSTILE shows once cleaned: its letters, and the text of the OSC left open (shown, not hidden). */
export const HOSTILE_SHOWN = 'ABCDEFGHIJKLM0;unterminated';
/** What a terminal acts on: escape, every C0 control but tab and line feed, DEL and every C1 control. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: what the check looks for.
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;

/** Printed text holds no control character a terminal would act on. */
export function expectPlain(text: string): void {
  const found = CONTROL.exec(text);
  expect(found, found ? `control character U+${found[0].charCodeAt(0).toString(16).padStart(4, '0')} at ${found.index}` : '').toBeNull();
}
