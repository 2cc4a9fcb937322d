// Markup hidden behind entities, for the plain-text fields: a cleaner that decodes entities once
// turns these into tags. Encoded once, encoded twice, and mixed with real tags, numeric entities and
// a plain `&amp;`.
import { expect } from 'vitest';

export const ENCODED_MARKUP = {
  encoded: 'Deal &lt;script&gt;alert(1)&lt;/script&gt;&lt;b onclick=x()&gt;now&lt;/b&gt;',
  double: 'Deal &amp;lt;script&amp;gt;alert(1)&amp;lt;/script&amp;gt;&amp;lt;img src=x onerror=alert(1)&amp;gt;now',
  mixed: 'Deal <i>now</i> &amp;amp;lt;iframe src=javascript:x&amp;amp;gt; Tom &amp; Jerry &#60;a href=x onmouseover=alert(1)&#62;here&#x3c;/a&#x3e;',
} as const;

/** A stored plain-text value: no tag left, nothing of the script, and cleaning it again changes nothing. */
export function expectPlain(value: string | null | undefined, clean: (text: string) => string): void {
  expect(typeof value).toBe('string');
  const text = value as string;
  expect(text).toContain('Deal');
  expect(text).not.toMatch(/<[a-z!/?]/i);
  expect(text).not.toMatch(/alert\(|onerror|onclick|onmouseover|javascript:/i);
  expect(clean(text)).toBe(text);
}
