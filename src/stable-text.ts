// Plain text must stay plain after it is stored: a cleaner decodes entities once, so
// `&lt;script&gt;` came out of it as `<script>`, markup again, and `&amp;lt;b&amp;gt;` needed two
// more passes. Both plain-text cleaners (pages' `sanitizeText`, coupons' `plainText`) run to a
// fixed point through here, so cleaning what they answer changes nothing.

/** Passes before giving up on nesting no real text has (each pass peels one level of encoding). */
const MAX_PASSES = 8;

/**
 * `clean` applied until its answer no longer changes. `clean` must leave alone (up to whitespace
 * and control characters, which it settles in one pass) any text without `<` or `&`: such a text is
 * final. After `MAX_PASSES` the rest is cleaned once more without `<` and `&`, so it ends too.
 */
export function cleanUntilStable(clean: (text: string) => string, input: string): string {
  let text = clean(input);
  for (let pass = 1; pass < MAX_PASSES; pass++) {
    if (!/[<&]/.test(text)) return text;
    const again = clean(text);
    if (again === text) return text;
    text = again;
  }
  return clean(text.replace(/[<&]/g, ''));
}
