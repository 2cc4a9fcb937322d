/**
 * Template tags for shop content: `%NAME%`-style placeholders replaced by the caller's values.
 * A tag with no value, an empty value or a name the caller does not know renders as nothing, never
 * as the tag itself (a page that says "%CASHBACK%" to members is worse than one that says less).
 * Configured templates are checked against the known tag list at start-up instead (`unknownTags`).
 */

/** The tags a page template may use, in the order the docs list them. */
export const PAGE_TEMPLATE_TAGS = [
  'NAME',
  'DOMAIN',
  'CASHBACK',
  'DESCRIPTION',
  'LOGO',
  'COUPONS_COUNT',
  'URL',
  'TRACKING_URL',
  'NETWORK',
] as const;

export type PageTemplateTag = (typeof PAGE_TEMPLATE_TAGS)[number];

/** Values for a template: tag name (without the percent signs) to text. */
export type TemplateTags = Readonly<Partial<Record<string, string | number | null | undefined>>>;

// Upper-case letters, digits and underscores between percent signs, starting with a letter, so
// "50% off, 10% more" is plain text and not a tag.
const TAG = /%([A-Z][A-Z0-9_]*)%/g;

export interface RenderOptions {
  /** Applied to each value before it is inserted, e.g. HTML escaping for a body. */
  escape?: (value: string, tag: string) => string;
}

/** Replaces every `%TAG%` with its value; unknown or empty tags become empty strings. */
export function renderTemplate(template: string, tags: TemplateTags, options: RenderOptions = {}): string {
  return template.replace(TAG, (_match, name: string) => {
    const value = Object.prototype.hasOwnProperty.call(tags, name) ? tags[name] : undefined;
    if (value === undefined || value === null) return '';
    const text = String(value);
    if (text === '') return '';
    return options.escape ? options.escape(text, name) : text;
  });
}

/** The distinct tag names a template uses, in order of first use. */
export function templateTags(template: string): string[] {
  const seen = new Set<string>();
  for (const match of template.matchAll(TAG)) seen.add(match[1]);
  return [...seen];
}

/** Tags a template uses that are not in `known` (default: the page tags). */
export function unknownTags(template: string, known: readonly string[] = PAGE_TEMPLATE_TAGS): string[] {
  const allowed = new Set(known);
  return templateTags(template).filter((tag) => !allowed.has(tag));
}

/** Escapes text for HTML element content and attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => (c === '&' ? '&amp;' : c === '<' ? '&lt;' : c === '>' ? '&gt;' : c === '"' ? '&quot;' : '&#39;'));
}
