// Coupon titles, descriptions and terms are plain text wherever they come from (a network's feed,
// an administrator, the AI): markup and script are dropped, entities decoded, so a shop page can
// escape the text once and show exactly what was stored.
import { DomUtils, parseDocument } from 'htmlparser2';
import { createRequire } from 'node:module';
import type sanitizeHtml from 'sanitize-html';
import { cleanUntilStable } from '../../stable-text.js';

// Loaded on first use: a command that never cleans HTML never pays for it.
const require = createRequire(import.meta.url);
const clean = (html: string, options: sanitizeHtml.IOptions): string => (require('sanitize-html') as typeof sanitizeHtml)(html, options);

// Block ends become line breaks before the tags go, so "a<br>b" does not read "ab".
const BREAKS = /<\s*br\s*\/?\s*>|<\s*\/\s*(p|div|li|h[1-6]|tr)\s*>/gi;

/**
 * Plain text of `input`: tags removed (script, style and similar with their content), entities
 * decoded, runs of spaces collapsed; `multiline` keeps single line breaks (descriptions), else
 * every whitespace run becomes one space (titles). Cleaned until it no longer changes: an encoded
 * tag (`&lt;script&gt;`, or encoded twice) decodes to markup, which the next pass removes.
 */
export function plainText(input: string, multiline: boolean): string {
  return cleanUntilStable((text) => plainTextOnce(text, multiline), input);
}

function plainTextOnce(input: string, multiline: boolean): string {
  let text = input;
  // The common case (no markup, no entity) skips both parsers: a refresh cleans 100,000 titles.
  if (/[<&]/.test(text)) {
    const stripped = clean(text.replace(BREAKS, '\n'), { allowedTags: [], allowedAttributes: {}, disallowedTagsMode: 'discard' });
    // sanitize-html answers HTML-escaped text; decoding it once more gives the characters.
    text = DomUtils.textContent(parseDocument(stripped, { decodeEntities: true }));
  }
  // Control characters other than tab and line breaks go: they garble terminals, CSV cells and HTML.
  text = text.replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/g, '').replace(/\r\n?/g, '\n');
  if (!multiline) return text.replace(/\s+/g, ' ').trim();
  return text
    .split('\n')
    .map((line) => line.replace(/[^\S\n]+/g, ' ').trim())
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}
