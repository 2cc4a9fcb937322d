import { describe, expect, it } from 'vitest';
import { isOutboundHref, OUTBOUND_REL, sanitizeBody, sanitizeText } from '../../../src/services/pages/sanitize.js';

describe('sanitizeBody', () => {
  it('drops scripts, styles, frames, objects and forms with their content', () => {
    const out = sanitizeBody(
      '<p>keep</p><script>alert(1)</script><style>p{}</style><iframe src="https://x.example/"></iframe>' +
        '<object data="x.swf"></object><embed src="x"><form action="/x"><input name="a"><button>go</button></form>' +
        '<svg><script>alert(2)</script></svg><noscript>ns</noscript><textarea>ta</textarea>',
    );
    expect(out).toBe('<p>keep</p>go');
    expect(out).not.toMatch(/script|style|iframe|object|embed|form|input|svg|alert/i);
  });

  it('drops every event handler attribute and the style attribute', () => {
    const out = sanitizeBody('<p onclick="x()" ONMOUSEOVER="y()" style="color:red" class="lead">a</p><img src="https://x.example/a.png" onerror="z()">');
    expect(out).toBe('<p class="lead">a</p><img src="https://x.example/a.png" />');
  });

  it('drops javascript:, data: and vbscript: URLs, also when hidden behind case, entities or whitespace', () => {
    const out = sanitizeBody(
      '<a href="javascript:alert(1)">a</a><a href=" JaVaScRiPt:alert(1)">b</a><a href="&#106;avascript:alert(1)">c</a>' +
        '<a href="java&#x09;script:alert(1)">d</a><a href="vbscript:msgbox(1)">e</a><a href="data:text/html,<script>1</script>">f</a>' +
        '<img src="data:image/png;base64,AAAA"><blockquote cite="javascript:x">q</blockquote>',
    );
    expect(out).not.toMatch(/javascript|vbscript|data:|href=|src=|cite=/i);
    expect(out).toContain('>a</a>');
  });

  it('keeps http, https, mailto, tel and relative URLs', () => {
    const out = sanitizeBody(
      '<a href="mailto:a@b.example">m</a><a href="tel:+15551234">t</a><a href="/shops/acme">s</a><img src="https://cdn.example/l.png" alt="logo">',
    );
    expect(out).toBe(
      '<a href="mailto:a@b.example">m</a><a href="tel:+15551234">t</a><a href="/shops/acme">s</a><img src="https://cdn.example/l.png" alt="logo" />',
    );
  });

  it('marks outbound links nofollow sponsored noopener, replacing any rel the author gave', () => {
    const out = sanitizeBody(
      '<a href="https://shop.example/" rel="follow me" target="_blank">go</a><a href="//shop.example/x">pr</a><a href="HTTP://shop.example/">up</a>',
    );
    expect(out).toBe(
      `<a href="https://shop.example/" rel="${OUTBOUND_REL}" target="_blank">go</a><a href="//shop.example/x" rel="${OUTBOUND_REL}">pr</a>` +
        `<a href="HTTP://shop.example/" rel="${OUTBOUND_REL}">up</a>`,
    );
  });

  it('gives internal links no rel unless they open a new window, and refuses odd targets', () => {
    expect(sanitizeBody('<a href="/x" rel="nofollow">a</a>')).toBe('<a href="/x">a</a>');
    expect(sanitizeBody('<a href="/x" target="_blank">a</a>')).toBe('<a href="/x" target="_blank" rel="noopener">a</a>');
    expect(sanitizeBody('<a href="/x" target="_parent">a</a>')).toBe('<a href="/x">a</a>');
  });

  it('keeps ordinary formatting, tables and lists, and drops ids and data attributes', () => {
    const html = '<h2>Title</h2><ul><li>one</li></ul><table><tbody><tr><td colspan="2">c</td></tr></tbody></table><p><strong>b</strong> <em>i</em></p>';
    expect(sanitizeBody(html)).toBe(html);
    expect(sanitizeBody('<div id="x" data-x="1" class="c">d</div>')).toBe('<div class="c">d</div>');
  });

  it('escapes stray markup characters in text and closes open tags', () => {
    expect(sanitizeBody('<p>a < b & c')).toBe('<p>a &lt; b &amp; c</p>');
  });

  it('lets no script through the usual bypasses', () => {
    const payloads = [
      '<SCRIPT>alert(1)</SCRIPT>',
      '<scr<script>ipt>alert(1)</script>',
      '<img src=x onerror=alert(1)//>',
      '<svg/onload=alert(1)>',
      '<body onload=alert(1)>',
      '<math><mtext><table><mglyph><style><img src=x onerror=alert(1)></style></mglyph></table></mtext></math>',
      '<a href="jav&#x0A;ascript:alert(1)">a</a>',
      '<a href="&#0000106&#0000097&#0000118&#0000097&#0000115&#0000099&#0000114&#0000105&#0000112&#0000116&#0000058alert(1)">a</a>',
      '<a href="javascript&colon;alert(1)">a</a>',
      '<a href=" &#14;  javascript:alert(1)">a</a>',
      '<img src="jaVasCript:alert(1)">',
      '<div style="background:url(javascript:alert(1))">x</div>',
      '<meta http-equiv="refresh" content="0;url=javascript:alert(1)">',
      '<base href="javascript:alert(1)//">',
      '<link rel="stylesheet" href="https://evil.example/x.css">',
      '<input autofocus onfocus=alert(1)>',
      '<details open ontoggle=alert(1)>x</details>',
      '<!--<img src="--><img src=x onerror=alert(1)//">',
      '<noscript><p title="</noscript><img src=x onerror=alert(1)>">',
    ];
    for (const html of payloads) {
      const out = sanitizeBody(html);
      expect(out, html).not.toMatch(/<script|javascript|\son\w+\s*=|<style|<svg|<math|<meta|<base|<link|<input|style=/i);
    }
  });

  it('recognises outbound hrefs by scheme or protocol-relative form only', () => {
    expect(isOutboundHref('https://x')).toBe(true);
    expect(isOutboundHref('  http://x')).toBe(true);
    expect(isOutboundHref('/\\x')).toBe(true);
    expect(isOutboundHref('\\\\x')).toBe(true);
    expect(isOutboundHref('/\t/x')).toBe(true);
    expect(isOutboundHref('/x')).toBe(false);
    expect(isOutboundHref('mailto:a@b')).toBe(false);
    expect(isOutboundHref('x/https://y')).toBe(false);
  });
});

describe('sanitizeText', () => {
  it('strips every tag, decodes entities and keeps words apart across blocks', () => {
    expect(sanitizeText('<p>Tom &amp; Jerry</p><p>a &lt; b</p>')).toBe('Tom & Jerry a < b');
    expect(sanitizeText('<b>Acme</b><i>Shop</i>')).toBe('AcmeShop');
    expect(sanitizeText('line<br>next')).toBe('line next');
  });

  it('drops script and style content, control characters and surplus whitespace', () => {
    expect(sanitizeText('  Hi<script>alert(1)</script><style>p{}</style>\u0001\u0007 there \n\t ')).toBe('Hi there');
  });

  it('cleans until nothing changes: encoded tags go, however deep, and a literal "<" or "&" stays', () => {
    expect(sanitizeText('&lt;b&gt;Bold&lt;/b&gt; &amp;lt;script&amp;gt;x&amp;lt;/script&amp;gt;deal')).toBe('Bold deal');
    expect(sanitizeText('AT&amp;amp;T: 5 &lt; 10')).toBe('AT&T: 5 < 10');
    // Nested past the passes it takes: what is left loses its "<" and "&", and is final.
    const deep = `${'&amp;'.repeat(1)}${'amp;'.repeat(20)}lt;script${'&amp;'.repeat(1)}${'amp;'.repeat(20)}gt;x`;
    const once = sanitizeText(deep);
    expect(once).not.toMatch(/[<&]/);
    expect(sanitizeText(once)).toBe(once);
  });

  it('leaves plain text alone, including CJK and percent signs', () => {
    expect(sanitizeText('京东商城 up to 5% back')).toBe('京东商城 up to 5% back');
    expect(sanitizeText('')).toBe('');
  });
});
