import { describe, expect, it } from 'vitest';
import { findIcons } from '../../../src/services/logos/site-icons.js';

describe('site icon discovery', () => {
  it('orders icons by declared size, apple-touch-icons and PNG first, resolved against the page', () => {
    const html = `<!doctype html><html><head>
      <link rel="shortcut icon" href="/favicon.ico">
      <LINK REL="icon" type="image/png" sizes="32x32" href="icons/32.png">
      <link href='https://cdn.example.net/touch.png' rel='apple-touch-icon'>
      <link rel="icon" sizes="192x192 96x96" href="/icons/192.png?v=2&amp;x=1">
      <link rel="stylesheet" href="/site.css">
    </head><body><link rel="icon" href="/late.png"></body></html>`;
    const icons = findIcons(html, 'https://shop.example.com/en/');
    expect(icons.map((i) => i.url)).toEqual([
      'https://shop.example.com/icons/192.png?v=2&x=1',
      'https://cdn.example.net/touch.png',
      'https://shop.example.com/en/icons/32.png',
      'https://shop.example.com/late.png',
      'https://shop.example.com/favicon.ico',
    ]);
    expect(icons[1]).toMatchObject({ rel: 'apple-touch-icon', size: 180 });
  });

  it('skips SVG, data: and javascript: icons, and follows <base href>', () => {
    const html = `<head><base href="https://static.example.org/assets/">
      <link rel="icon" type="image/svg+xml" href="/icon.svg">
      <link rel="icon" sizes="any" href="/any-icon">
      <link rel="icon" href="mask.svgz">
      <link rel="icon" href="data:image/png;base64,AAAA">
      <link rel="icon" href="javascript:alert(1)">
      <link rel="icon" href="ok.png"><link rel="icon" href="ok.png">
      <link rel="icon" href="http://[bad">`;
    expect(findIcons(html, 'https://shop.example.com/').map((i) => i.url)).toEqual(['https://static.example.org/assets/ok.png']);
  });

  it('finds nothing on a page without icon links, or on text that is not HTML', () => {
    expect(findIcons('<html><head><title>Shop</title></head></html>', 'https://a.example/')).toEqual([]);
    expect(findIcons('{"json": true}', 'https://a.example/')).toEqual([]);
    expect(findIcons('<link rel="icon">', 'https://a.example/')).toEqual([]);
  });

  it('reads at most 50 icon links from one page', () => {
    const html = Array.from({ length: 500 }, (_, i) => `<link rel="icon" href="/i${i}.png">`).join('');
    expect(findIcons(html, 'https://a.example/')).toHaveLength(50);
  });
});
