/**
 * The one HTML gate for shop content: every page body (template output, an administrator's edit,
 * an AI rewrite) passes `sanitizeBody` before it is stored, and every plain field (titles,
 * excerpts, labels) passes `sanitizeText`.
 *
 * The allowlist is modelled on WordPress's post filter (kses `$allowedposttags`) and is stricter
 * where that filter leans on later escaping: no forms or form controls, no embedded media or
 * frames, no `style` attribute (its CSS would need a second parser to make safe), no `id` (DOM
 * clobbering on the page that embeds the body). URLs may only use http, https, mailto and tel, or
 * be relative; `javascript:`, `data:`, `vbscript:` and any other scheme are dropped with the
 * attribute. Links that leave the site carry `rel="nofollow sponsored noopener"`: shop pages link
 * to advertisers, and search engines ask for paid links to say so.
 */
import { createRequire } from 'node:module';
import type sanitizeHtml from 'sanitize-html';
import { Parser } from 'htmlparser2';
import { cleanUntilStable } from '../../stable-text.js';

// Loaded on first use: a command that never cleans HTML never pays for it.
const require = createRequire(import.meta.url);
const clean = (html: string, options: sanitizeHtml.IOptions): string => (require('sanitize-html') as typeof sanitizeHtml)(html, options);

const GLOBAL_ATTRIBUTES = ['class', 'title', 'lang', 'dir', 'role', 'aria-*'];

const ALLOWED_TAGS = [
  'a',
  'abbr',
  'acronym',
  'address',
  'article',
  'aside',
  'b',
  'bdi',
  'bdo',
  'big',
  'blockquote',
  'br',
  'caption',
  'cite',
  'code',
  'col',
  'colgroup',
  'dd',
  'del',
  'details',
  'dfn',
  'div',
  'dl',
  'dt',
  'em',
  'figcaption',
  'figure',
  'footer',
  'h1',
  'h2',
  'h3',
  'h4',
  'h5',
  'h6',
  'header',
  'hgroup',
  'hr',
  'i',
  'img',
  'ins',
  'kbd',
  'li',
  'main',
  'mark',
  'nav',
  'ol',
  'p',
  'pre',
  'q',
  's',
  'samp',
  'section',
  'small',
  'span',
  'strike',
  'strong',
  'sub',
  'summary',
  'sup',
  'table',
  'tbody',
  'td',
  'tfoot',
  'th',
  'thead',
  'time',
  'tr',
  'tt',
  'u',
  'ul',
  'var',
  'wbr',
];

const TAG_ATTRIBUTES: Record<string, sanitizeHtml.AllowedAttribute[]> = {
  a: ['href', 'rel', 'hreflang', { name: 'target', multiple: false, values: ['_blank', '_self'] }],
  blockquote: ['cite'],
  q: ['cite'],
  del: ['cite', 'datetime'],
  ins: ['cite', 'datetime'],
  time: ['datetime'],
  img: ['src', 'alt', 'width', 'height', { name: 'loading', multiple: false, values: ['lazy', 'eager'] }],
  ol: ['start', 'reversed', 'type'],
  li: ['value'],
  td: ['colspan', 'rowspan', 'headers'],
  th: ['colspan', 'rowspan', 'headers', 'scope', 'abbr'],
  col: ['span'],
  colgroup: ['span'],
  details: ['open'],
  abbr: ['title'],
};

const ALLOWED_ATTRIBUTES: Record<string, sanitizeHtml.AllowedAttribute[]> = { '*': GLOBAL_ATTRIBUTES };
for (const [tag, attributes] of Object.entries(TAG_ATTRIBUTES)) ALLOWED_ATTRIBUTES[tag] = attributes;

/** The `rel` every link leaving the site carries. */
export const OUTBOUND_REL = 'nofollow sponsored noopener';

// Browsers ignore ASCII whitespace and control characters before the scheme, so the check must too.
// A backslash counts as a slash in http(s) URLs, so `\\host` and `/\\host` are protocol-relative too.
const OUTBOUND_HREF = /^[\u0000-\u0020]*(?:https?:|[/\\][\u0000-\u0020]*[/\\])/i;

/** True when a link target is absolute (or protocol-relative) and so leaves the site. */
export function isOutboundHref(href: string): boolean {
  return OUTBOUND_HREF.test(href);
}

const EMPTY_DROPPED = new Set(['p', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6']);

const BODY_OPTIONS: sanitizeHtml.IOptions = {
  allowedTags: ALLOWED_TAGS,
  allowedAttributes: ALLOWED_ATTRIBUTES,
  allowedSchemes: ['http', 'https', 'mailto', 'tel'],
  allowedSchemesByTag: { img: ['http', 'https'] },
  allowedSchemesAppliedToAttributes: ['href', 'src', 'cite'],
  allowProtocolRelative: true,
  disallowedTagsMode: 'discard',
  // Content of these is never text a reader should see once the element is dropped.
  nonTextTags: ['script', 'style', 'textarea', 'option', 'noscript', 'title', 'template', 'iframe', 'object', 'embed', 'svg', 'math', 'select', 'head'],
  // Leftovers of a template whose tags had no value: an image without a source, an empty
  // paragraph or heading.
  exclusiveFilter: (frame) => {
    if (frame.tag === 'img') return !frame.attribs.src || !/^\s*(?:https?:|\/)/i.test(frame.attribs.src);
    if (EMPTY_DROPPED.has(frame.tag)) return frame.text.trim() === '' && frame.mediaChildren.length === 0;
    return false;
  },
  transformTags: {
    a: (tagName, attribs) => {
      const attributes = { ...attribs };
      if (attributes.target !== undefined && attributes.target !== '_blank' && attributes.target !== '_self') delete attributes.target;
      if (typeof attributes.href === 'string' && isOutboundHref(attributes.href)) attributes.rel = OUTBOUND_REL;
      else if (attributes.target === '_blank') attributes.rel = 'noopener';
      else delete attributes.rel;
      return { tagName, attribs: attributes };
    },
  },
};

/** Sanitises HTML for a page body: allowlisted tags and attributes, safe URL schemes, outbound links marked. */
export function sanitizeBody(html: string): string {
  return clean(html, BODY_OPTIONS).trim();
}

// Elements whose boundaries separate words: "<p>a</p><p>b</p>" reads "a b", not "ab".
const BLOCK_TAGS = new Set([
  'address',
  'article',
  'aside',
  'blockquote',
  'br',
  'dd',
  'details',
  'div',
  'dl',
  'dt',
  'figcaption',
  'figure',
  'footer',
  'h1',
  'h2',
  'h3',
  'h4',
  'h5',
  'h6',
  'header',
  'hr',
  'li',
  'main',
  'nav',
  'ol',
  'p',
  'pre',
  'section',
  'summary',
  'table',
  'td',
  'th',
  'tr',
  'ul',
  'img',
]);
const HIDDEN_TAGS = new Set(['script', 'style', 'textarea', 'noscript', 'title', 'template', 'iframe', 'object', 'svg', 'math', 'select', 'head']);

/**
 * Plain text from anything: tags removed (with the content of script-like elements), entities
 * decoded, whitespace runs collapsed to one space, control characters dropped. The result is text,
 * not HTML: whoever renders it escapes it. Cleaned until it no longer changes, so decoded entities
 * cannot turn into markup (`&lt;b&gt;` is `b`'s text, not `<b>`).
 */
export function sanitizeText(input: string): string {
  return cleanUntilStable(textOnce, input);
}

function textOnce(input: string): string {
  const parts: string[] = [];
  let hidden = 0;
  const parser = new Parser(
    {
      onopentagname(name) {
        if (HIDDEN_TAGS.has(name)) hidden += 1;
        if (BLOCK_TAGS.has(name)) parts.push(' ');
      },
      onclosetag(name) {
        if (HIDDEN_TAGS.has(name)) hidden = Math.max(0, hidden - 1);
        if (BLOCK_TAGS.has(name)) parts.push(' ');
      },
      ontext(text) {
        if (hidden === 0) parts.push(text);
      },
    },
    { decodeEntities: true, lowerCaseTags: true, recognizeSelfClosing: true },
  );
  parser.write(input);
  parser.end();
  return parts
    .join('')
    .replace(/[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F]/g, '')
    .replace(/\s+/g, ' ')
    .trim();
}
