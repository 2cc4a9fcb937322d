// Text on its way to a terminal. What the CLI prints comes partly from outside (a network's feed,
// a request's fields in the log, the AI provider's answer), and a terminal obeys control
// characters wherever they appear: OSC 52 writes the clipboard, OSC 8 hides a link behind text,
// OSC 0 sets the window title, CSI moves the cursor or clears the screen, and the 8-bit C1 forms
// (0x9B is CSI, 0x9D is OSC) do the same on terminals that take them. So printed text keeps no
// control character at all, and JSON keeps every one escaped.
//
// A small function rather than strip-ansi: that removes well-formed ANSI sequences only, leaving
// bare C0/C1 bytes, an unterminated OSC or a lone ESC behind. Here whole sequences go first (so
// their parameters, a link's URL or a title, are not left on screen as text), then any control
// character still left, which is what makes the result safe whatever the input.

/**
 * Escape sequences, ECMA-48: a string sequence (OSC, DCS, SOS, PM, APC, 7- or 8-bit) with its
 * terminator (BEL, or ST as ESC \ or 0x9C); a CSI (ESC [ or 0x9B) with its parameters,
 * intermediates and final byte; any other ESC with its intermediates and final byte. A string
 * sequence left unterminated loses its introducer only and its text stays visible: removing it to
 * the end would let one field hide whatever is printed after it.
 */
const SEQUENCE =
  // biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is this file's purpose.
  /(?:\u001b[\]PX^_]|[\u0090\u0098\u009d\u009e\u009f])[^\u0007\u001b\u009c]*(?:\u0007|\u001b\\|\u009c)|(?:\u001b\[|\u009b)[\u0030-\u003f]*[\u0020-\u002f]*[\u0040-\u007e]?|\u001b[\u0020-\u002f]*[\u0030-\u007e]?/g;
/** C0 controls but tab and line feed, DEL, and C1 controls. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is this file's purpose.
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;
/** Tabs and line breaks, which a single line shows as one space (a lone carriage return is a control like any other). */
const LINE_BREAK = /\r?\n|\t/g;
/** What JSON.stringify leaves raw although a terminal may act on it: DEL, C1, and the Unicode line separators. */
const JSON_RAW = /[\u007f-\u009f\u2028\u2029]/g;

/** Text with no escape sequence and no control character but tabs and line feeds (a page body, a message of several lines). */
export function terminalText(text: string): string {
  return text.replace(SEQUENCE, '').replace(CONTROL, '');
}

/** One line of text (a table cell, a field, a log line): as terminalText, with tabs and line breaks shown as spaces. */
export function terminalLine(text: string): string {
  return text.replace(SEQUENCE, '').replace(LINE_BREAK, ' ').replace(CONTROL, '');
}

/**
 * `JSON.stringify` whose output a terminal shows as it is: it escapes C0 controls itself, and
 * this escapes the rest (only ever inside strings, so the JSON parses back to the same value).
 */
export function terminalJson(value: unknown, indent?: number): string {
  const json = JSON.stringify(value, null, indent);
  return json === undefined ? 'null' : json.replace(JSON_RAW, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
