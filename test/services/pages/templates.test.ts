import { describe, expect, it } from 'vitest';
import { escapeHtml, renderTemplate } from '../../../src/services/pages/templates.js';
import { PAGE_TEMPLATE_TAGS, templateTags, unknownTags } from '../../../src/config/template-tags.js';

describe('page templates', () => {
  it('replaces known tags with their values', () => {
    expect(renderTemplate('%NAME% Cashback: up to %CASHBACK% at %DOMAIN%', { NAME: 'Acme', CASHBACK: '5%', DOMAIN: 'acme.example' })).toBe(
      'Acme Cashback: up to 5% at acme.example',
    );
    expect(renderTemplate('%COUPONS_COUNT% coupons', { COUPONS_COUNT: 0 })).toBe('0 coupons');
  });

  it('renders unknown, missing, null and empty tags as nothing, never as the tag itself', () => {
    expect(renderTemplate('[%FOO%][%NAME%][%LOGO%][%URL%]', { NAME: null, LOGO: '', URL: undefined })).toBe('[][][][]');
    expect(renderTemplate('%CONSTRUCTOR%%HAS_OWN_PROPERTY%', {})).toBe('');
    // Not tag syntax (lower case, leading underscore): plain text.
    expect(renderTemplate('%toString% %__PROTO__%', {})).toBe('%toString% %__PROTO__%');
  });

  it('treats percent signs in prose as text', () => {
    expect(renderTemplate('50% off, 10% more, 100%', { NAME: 'x' })).toBe('50% off, 10% more, 100%');
  });

  it('escapes values, not the template, when asked', () => {
    expect(renderTemplate('<h2>%NAME%</h2>', { NAME: 'Tom & <Jerry>' }, { escape: escapeHtml })).toBe('<h2>Tom &amp; &lt;Jerry&gt;</h2>');
    expect(escapeHtml(`"'`)).toBe('&quot;&#39;');
  });

  it('lists the tags a template uses and the ones it does not know', () => {
    expect(templateTags('%NAME% %DOMAIN% %NAME% %FOO_1%')).toEqual(['NAME', 'DOMAIN', 'FOO_1']);
    expect(unknownTags('%NAME% %FOO% %TRACKING_URL%')).toEqual(['FOO']);
    expect(unknownTags('%NAME% %X%', ['X'])).toEqual(['NAME']);
    expect(PAGE_TEMPLATE_TAGS).toContain('COUPONS_COUNT');
  });
});
