import { describe, expect, it } from 'vitest';
import { checkTargetDomain, MAX_TARGET_URL, parseLinkTarget, withoutTargetParam } from '../../src/networks/tracking-links.js';

const refusal = (fn: () => unknown) => {
  try {
    fn();
  } catch (err) {
    return err;
  }
  throw new Error('expected a refusal');
};

describe('tracking link targets', () => {
  it('takes no target as null and normalises a given one', () => {
    for (const none of [null, undefined, '', '   ']) expect(parseLinkTarget(none)).toBeNull();
    expect(parseLinkTarget(' https://Shop.test/a b?x=1 ')!.toString()).toBe('https://shop.test/a%20b?x=1');
  });

  it('refuses anything but an absolute http(s) URL of at most 2000 characters, without credentials', () => {
    for (const [url, message] of [
      [42, /string/],
      ['shop.test/sale', /valid absolute URL/],
      ['mailto:ann@shop.test', /http or https/],
      ['data:text/html,<script>alert(1)</script>', /http or https/],
      ['https://user:pw@shop.test/', /user name or password/],
      [`https://shop.test/${'a'.repeat(MAX_TARGET_URL)}`, /at most 2000 characters$/],
      [`https://shop.test/${'é'.repeat(700)}`, /once encoded/],
    ] as const) {
      expect(
        refusal(() => parseLinkTarget(url)),
        String(url).slice(0, 40),
      ).toMatchObject({ code: 'svc_invalid_url', status: 400, data: { params: { url: expect.stringMatching(message) } } });
    }
  });

  it("accepts the advertiser's domain and its subdomains only, ignoring www. and case", () => {
    const on = (url: string, domain: string | null) => () => checkTargetDomain(new URL(url), domain);
    expect(on('https://shop.test/', 'shop.test')).not.toThrow();
    expect(on('https://deals.SHOP.test/', 'www.shop.test')).not.toThrow();
    expect(on('https://shop.test/', 'https://www.shop.test/home')).not.toThrow();
    expect(on('https://anything.test/', null)).not.toThrow();
    expect(on('https://xn--bcher-kva.test/', 'bücher.test')).not.toThrow();
    for (const url of ['https://myshop.test/', 'https://shop.test.evil.test/', 'https://evil.test/shop.test', 'https://[::1]/']) {
      expect(refusal(on(url, 'shop.test')), url).toMatchObject({
        code: 'svc_invalid_url',
        data: { params: { url: 'url must be on shop.test or one of its subdomains' } },
      });
    }
  });

  it('leaves the target parameter out of a link without a target, wherever it stands in the query', () => {
    expect(withoutTargetParam('https://go.test/c?aff=77&subid={sub_id}&url={url}')).toBe('https://go.test/c?aff=77&subid={sub_id}');
    expect(withoutTargetParam('https://go.test/c?url={url}&subid={sub_id}')).toBe('https://go.test/c?subid={sub_id}');
    expect(withoutTargetParam('https://go.test/c/{sub_id}?u={url}')).toBe('https://go.test/c/{sub_id}');
    expect(withoutTargetParam('https://go.test/c?s={sub_id}&u={url}#top')).toBe('https://go.test/c?s={sub_id}#top');
    // Only a parameter whose whole value is the target goes; a path without a query is kept as it is.
    expect(withoutTargetParam('https://go.test/c?s={sub_id}&r=x{url}')).toBe('https://go.test/c?s={sub_id}&r=x{url}');
    expect(withoutTargetParam('https://go.test/{url}/{sub_id}')).toBe('https://go.test/{url}/{sub_id}');
  });
});
