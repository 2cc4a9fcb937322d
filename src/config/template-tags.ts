/**
 * The template tag language of shop content: `%NAME%`-style placeholders, the tags a page
 * template may use, and the check of a template against a tag list. Below the services: the
 * configuration checks its page templates with it at start-up, the pages and AI domains render
 * and check theirs with it.
 */

/** The tags a page template may use, in the order the docs list them. */
export const PAGE_TEMPLATE_TAGS = ['NAME', 'DOMAIN', 'CASHBACK', 'DESCRIPTION', 'LOGO', 'COUPONS_COUNT', 'URL', 'TRACKING_URL', 'NETWORK'] as const;

export type PageTemplateTag = (typeof PAGE_TEMPLATE_TAGS)[number];

/** Values for a template: tag name (without the percent signs) to text. */
export type TemplateTags = Readonly<Partial<Record<string, string | number | null | undefined>>>;

// Upper-case letters, digits and underscores between percent signs, starting with a letter, so
// "50% off, 10% more" is plain text and not a tag.
export const TAG = /%([A-Z][A-Z0-9_]*)%/g;

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
