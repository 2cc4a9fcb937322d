/**
 * Template tags for shop content: `%NAME%`-style placeholders replaced by the caller's values.
 * A tag with no value, an empty value or a name the caller does not know renders as nothing, never
 * as the tag itself (a page that says "%CASHBACK%" to members is worse than one that says less).
 * Configured templates are checked against the known tag list at start-up instead (`unknownTags`,
 * src/config/template-tags.ts, with the tag language itself).
 */

import { TAG, type TemplateTags } from '../../config/template-tags.js';

export interface RenderOptions {
  /** Applied to each value before it is inserted, e.g. HTML escaping for a body. */
  escape?: (value: string, tag: string) => string;
}

/** Replaces every `%TAG%` with its value; unknown or empty tags become empty strings. */
export function renderTemplate(template: string, tags: TemplateTags, options: RenderOptions = {}): string {
  return template.replace(TAG, (_match, name: string) => {
    const value = Object.hasOwn(tags, name) ? tags[name] : undefined;
    if (value === undefined || value === null) return '';
    const text = String(value);
    if (text === '') return '';
    return options.escape ? options.escape(text, name) : text;
  });
}

/** Escapes text for HTML element content and attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => (c === '&' ? '&amp;' : c === '<' ? '&lt;' : c === '>' ? '&gt;' : c === '"' ? '&quot;' : '&#39;'));
}
