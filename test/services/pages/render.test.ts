import { describe, expect, it } from 'vitest';
import type { PageSource } from '../../../src/services/advertisers/index.js';
import type { CashbackRule } from '../../../src/cashback-rule.js';
import { cashbackText, pageTags } from '../../../src/services/pages/render.js';
import { slugBase, slugOf } from '../../../src/services/pages/slugs.js';

const rule = (type: CashbackRule['type'], value: string, currency: string | null = null): CashbackRule => ({ type, value, currency });
const pct = (min: string | null, max: string | null) => ({ type: 'percent', min, max, currency: null });

describe('cashback as a page shows it', () => {
  it('gives a share of a percent commission range as "up to" its top, and one value as itself', () => {
    expect(cashbackText(rule('percent_commission', '50'), pct('4', '10'), 'USD')).toBe('up to 5%');
    expect(cashbackText(rule('percent_commission', '50'), pct('6', '6'), 'USD')).toBe('3%');
    expect(cashbackText(rule('percent_commission', '50'), pct(null, '7'), 'USD')).toBe('3.5%');
    expect(cashbackText(rule('percent_commission', '33.333'), pct('3', '3'), 'USD')).toBe('0.99%');
  });

  it('gives a share of a flat commission in its currency, cut to the minor unit, never rounded up', () => {
    expect(cashbackText(rule('percent_commission', '50'), { type: 'flat', min: '1', max: '5.01', currency: 'EUR' }, 'USD')).toBe('up to 2.50 EUR');
    expect(cashbackText(rule('percent_commission', '50'), { type: 'flat', min: '301', max: '301', currency: 'JPY' }, 'USD')).toBe('150 JPY');
    expect(cashbackText(rule('percent_commission', '50'), { type: 'flat', min: '1', max: '2', currency: null }, 'USD')).toBe('');
  });

  it('shows a sale percent as that percent and a flat rule as its amount', () => {
    expect(cashbackText(rule('percent_sale', '3'), null, 'USD')).toBe('3%');
    expect(cashbackText(rule('flat', '5'), null, 'USD')).toBe('5.00 USD');
    expect(cashbackText(rule('flat', '500', 'JPY'), null, 'USD')).toBe('500 JPY');
  });

  it('says nothing when it cannot be told: no commission, a mixed one, zero, a malformed value', () => {
    expect(cashbackText(rule('percent_commission', '50'), null, 'USD')).toBe('');
    expect(cashbackText(rule('percent_commission', '50'), { type: 'mixed', min: '1', max: '2', currency: null }, 'USD')).toBe('');
    expect(cashbackText(rule('percent_commission', '0'), pct('4', '10'), 'USD')).toBe('');
    expect(cashbackText(rule('percent_commission', '50'), pct('n/a', 'lots'), 'USD')).toBe('');
    expect(cashbackText(rule('percent_sale', '0'), null, 'USD')).toBe('');
    expect(cashbackText(rule('flat', 'x'), null, 'USD')).toBe('');
    expect(cashbackText(rule('flat', '5', 'XYZ'), null, 'USD')).toBe('5.00 XYZ');
  });
});

describe('page tags of a shop', () => {
  const shop: PageSource = {
    id: 7,
    module: 'awin',
    advertiser: '7',
    name: 'Shop',
    domain: null,
    site_url: 'https://www.shop.example/de/',
    logo: 'javascript:alert(1)',
    description: null,
    tracking_template: 'https://track.example/c?id=7',
    commission: null,
    status: 'active',
    page_id: null,
  };

  it('takes the domain from the site when the network gave none, and drops URLs that are not http(s)', () => {
    const tags = pageTags(shop, { cashback: '', network: 'Awin', coupons: 3 });
    expect(tags).toEqual({
      NAME: 'Shop',
      DOMAIN: 'shop.example',
      CASHBACK: '',
      DESCRIPTION: '',
      LOGO: '',
      COUPONS_COUNT: '3',
      URL: 'https://www.shop.example/de/',
      TRACKING_URL: 'https://track.example/c?id=7',
      NETWORK: 'Awin',
    });
  });

  it('leaves out a tracking template that still has placeholders for the member', () => {
    expect(
      pageTags(
        { ...shop, tracking_template: 'https://t.example/?u={{url}}&s={{sub_id}}', logo: '/media/ab.png', site_url: 'not a url' },
        { cashback: '', network: 'Awin', coupons: 0 },
      ),
    ).toMatchObject({ TRACKING_URL: '', LOGO: '/media/ab.png', URL: '', DOMAIN: '' });
  });
});

describe('slugs', () => {
  it('transliterates, keeps digits and falls back from the name to the domain to shop-<id>', () => {
    expect(slugOf('Café Müller')).toBe('cafe-mueller');
    expect(slugOf('Магазин Обуви')).toBe('magazin-obuvi');
    expect(slugOf('京东')).toBe('');
    expect(slugBase({ name: '京东', domain: 'jd.com', id: 3 })).toBe('jd-com');
    expect(slugBase({ name: '京东', domain: '京东.cn', id: 3 })).toBe('cn');
    expect(slugBase({ name: '', domain: null, id: 3 })).toBe('shop-3');
    expect(slugBase({ name: 'ShopName', domain: null, id: 3 })).toBe('shopname');
  });

  it('cuts a long slug at a word boundary and leaves room for a suffix', () => {
    const slug = slugOf(Array.from({ length: 60 }, (_, i) => `word${i}`).join(' '));
    expect(slug.length).toBeLessThanOrEqual(190);
    expect(slug).toMatch(/^word0-word1-.*word\d+$/);
    expect(slugOf('x'.repeat(500))).toHaveLength(190);
  });
});
