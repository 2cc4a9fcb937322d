import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/index.js';
import { tempDir } from '../helpers/temp.js';

const load = (overrides: Record<string, unknown> = {}, env: Record<string, string> = {}) =>
  loadConfig({ env: { CASHTRACK_DATA_DIR: tempDir('cashtrack-config-'), ...env }, overrides });
const refused = (key: string, text: string) => expect.objectContaining({ code: 'svc_invalid_config', data: { key }, message: expect.stringContaining(text) });

describe('page configuration', () => {
  it('has a default template using only known tags, drafts by default and no public address', () => {
    const { pages } = load();
    expect(pages.default_template).toBe('default');
    expect(pages.default_status).toBe('draft');
    expect(pages.link_template).toBeNull();
    expect(pages.templates.default.title).toBe('%NAME% Cashback');
  });

  it('refuses a template naming an unknown tag, saying which and which are known', () => {
    expect(() => load({ 'pages.templates.promo': { title: '%NAME% %PRICE%', body: '<p>%NAME%</p>', excerpt: '' } })).toThrow(
      refused('pages.templates.promo.title', 'unknown tag %PRICE%'),
    );
    expect(() => load({ 'pages.templates.promo': { title: '%NAME%', body: '<p>%NAME% %FOO% %BAR%</p>', excerpt: '' } })).toThrow(
      refused('pages.templates.promo.body', 'unknown tags %FOO%, %BAR% (known: %NAME%'),
    );
    expect(() => load({ 'pages.templates.promo': { title: '%NAME%', body: '', excerpt: '%Name%' } })).not.toThrow();
  });

  it('refuses a default template that does not exist, a bad status and a link template that is not an http(s) URL with known tags', () => {
    expect(() => load({}, { CASHTRACK_PAGES_DEFAULT_TEMPLATE: 'nope' })).toThrow(
      refused('pages.default_template', 'CASHTRACK_PAGES_DEFAULT_TEMPLATE (pages.default_template): names no template of pages.templates (default)'),
    );
    expect(() => load({}, { CASHTRACK_PAGES_DEFAULT_STATUS: 'pending' })).toThrow(refused('pages.default_status', 'CASHTRACK_PAGES_DEFAULT_STATUS'));
    expect(() => load({}, { CASHTRACK_PAGES_LINK_TEMPLATE: 'javascript:alert(%SLUG%)' })).toThrow(refused('pages.link_template', 'must be an http(s) URL'));
    expect(() => load({}, { CASHTRACK_PAGES_LINK_TEMPLATE: 'https://x.example/%NAME%' })).toThrow(refused('pages.link_template', 'unknown tag %NAME%'));
    expect(load({}, { CASHTRACK_PAGES_LINK_TEMPLATE: 'https://x.example/shops/%SLUG%' }).pages.link_template).toBe('https://x.example/shops/%SLUG%');
  });

  it('refuses a template without a title and an empty set of templates', () => {
    expect(() => load({ 'pages.templates.promo': { body: '' } })).toThrow(refused('pages.templates.promo.title', 'required'));
    expect(() => load({ 'pages.templates': {} })).toThrow(expect.objectContaining({ code: 'svc_invalid_config' }));
  });
});
