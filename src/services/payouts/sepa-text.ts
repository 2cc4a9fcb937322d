// Text in a SEPA file: the EPC's Latin character set (the SEPA Credit Transfer Implementation
// Guidelines, "Character Set": a-z A-Z 0-9 / - ? : ( ) . , ' + and space). Banks may refuse
// anything else, or silently mangle it, so names are transliterated here before a file is made:
// German umlauts and ß as German banks write them (ä → ae, ö → oe, ü → ue, ß → ss), a few letters
// that have no accent to strip by their usual Latin spelling (æ → ae, ø → o, ł → l, þ → th), any
// other accented Latin letter without its accent (é → e, ñ → n, å → a, č → c, through Unicode
// decomposition), a few punctuation marks by their nearest allowed one (& → +, quotes → ',
// dashes → -, brackets → parentheses) and everything else (other scripts, symbols, emoji, control
// characters) by a space; runs of spaces collapse and the text is cut to the field's length.

/** The characters a SEPA text field may hold. */
const ALLOWED = /^[A-Za-z0-9/\-?:().,'+ ]*$/;

/** Letters and marks that Unicode decomposition does not take to an allowed character. */
const SPELLED: Record<string, string> = {
  ä: 'ae',
  ö: 'oe',
  ü: 'ue',
  Ä: 'Ae',
  Ö: 'Oe',
  Ü: 'Ue',
  ß: 'ss',
  ẞ: 'SS',
  æ: 'ae',
  Æ: 'AE',
  œ: 'oe',
  Œ: 'OE',
  ø: 'o',
  Ø: 'O',
  ł: 'l',
  Ł: 'L',
  đ: 'd',
  Đ: 'D',
  ð: 'd',
  Ð: 'D',
  þ: 'th',
  Þ: 'TH',
  ı: 'i',
  ŀ: 'l',
  Ŀ: 'L',
  ħ: 'h',
  Ħ: 'H',
  ŧ: 't',
  Ŧ: 'T',
  '&': '+',
  '"': "'",
  '`': "'",
  '´': "'",
  '‘': "'",
  '’': "'",
  '‚': "'",
  '“': "'",
  '”': "'",
  '„': "'",
  '«': "'",
  '»': "'",
  '–': '-',
  '—': '-',
  '‐': '-',
  '‑': '-',
  _: '-',
  '[': '(',
  ']': ')',
  '{': '(',
  '}': ')',
};

/**
 * `text` in the SEPA character set, at most `max` characters (70: `Max70Text`, the EPC's limit
 * on a name; 140 for unstructured remittance information). Empty when nothing of it survives.
 */
export function sepaText(text: string, max = 70): string {
  let out = '';
  for (const ch of text) {
    const spelled = SPELLED[ch];
    if (spelled !== undefined) out += spelled;
    else out += ch.normalize('NFKD').replace(/\p{M}/gu, '');
  }
  out = Array.from(out, (ch) => (ALLOWED.test(ch) ? ch : ' '))
    .join('')
    .replace(/ {2,}/g, ' ')
    .trim();
  return out.slice(0, max).trimEnd();
}

/** Whether `text` is already in the SEPA character set. */
export function isSepaText(text: string): boolean {
  return ALLOWED.test(text);
}

/**
 * Whether `ref` may be a SEPA identifier (EndToEndId, MsgId, PmtInfId): 1 to 35 characters of
 * the set, neither starting nor ending with '/' and without '//' (the EPC's rule for references),
 * and no spaces (banks trim them away, and a trimmed id no longer matches its report).
 */
export function isSepaReference(ref: string): boolean {
  return /^[A-Za-z0-9/\-?:().,'+]{1,35}$/.test(ref) && !ref.startsWith('/') && !ref.endsWith('/') && !ref.includes('//');
}
