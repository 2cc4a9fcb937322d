// A JSON feed read as it streams in: the records of the items path, in pages, from a body cut in
// arbitrary chunks; the documents it refuses (not JSON, no array, a record or a value past the
// cap, nesting past the limit) and what it passes over (elements that are not records, what lies
// off the path, prototype keys).
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { jsonRecords, MAX_DEPTH } from '../../src/networks/json-records.js';

/** The text as a body, in chunks of `size` bytes (a multi-byte character may be cut in two). */
function body(text: string, size = 7): Readable {
  const bytes = Buffer.from(text);
  const chunks: Buffer[] = [];
  for (let i = 0; i < bytes.length; i += size) chunks.push(bytes.subarray(i, i + size));
  return Readable.from(chunks);
}

async function read(text: string, items?: string, options: { pageSize?: number; maxRecordBytes?: number; size?: number } = {}) {
  const pages: Record<string, unknown>[][] = [];
  for await (const page of jsonRecords(body(text, options.size), items, {
    pageSize: options.pageSize ?? 2,
    maxRecordBytes: options.maxRecordBytes ?? 1024 * 1024,
  }))
    pages.push(page);
  return pages;
}

describe('a JSON feed read as it streams in', () => {
  it('yields the records at the items path in pages, passing over what lies off the path and elements that are not records', async () => {
    const doc = {
      meta: { programs: [{ id: 'decoy' }], data: { programs: [{ id: 'decoy' }] } },
      data: {
        other: [{ id: 'decoy' }],
        programs: [{ id: 1, name: 'Tée ☕', nested: { a: [1, { b: null }] } }, 2, 'x', null, [{ id: 'in a list' }], { id: 3 }, { id: 4 }],
      },
      after: { programs: [{ id: 'decoy' }] },
    };
    const pages = await read(JSON.stringify(doc, null, 2), 'data.programs');
    expect(pages).toEqual([[{ id: 1, name: 'Tée ☕', nested: { a: [1, { b: null }] } }, { id: 3 }], [{ id: 4 }]]);
  });

  it('reads a document that is the array itself, with a byte-order mark, and a path through array indexes', async () => {
    expect(await read('\uFEFF[{"id":1},{"id":2},{"id":3}]', undefined, { pageSize: 10 })).toEqual([[{ id: 1 }, { id: 2 }, { id: 3 }]]);
    expect(await read('{"pages":[{"list":[{"id":"a"}]},{"list":[{"id":"b"}]}]}', 'pages.1.list')).toEqual([[{ id: 'b' }]]);
    expect(await read('{"items":[]}', 'items')).toEqual([]);
  });

  it('matches each path segment as a whole own key, never a prototype or a key holding a dot', async () => {
    expect(await read('{"data.programs":[{"id":1}],"data":{"programs":[{"id":2}]}}', 'data.programs')).toEqual([[{ id: 2 }]]);
    await expect(read('{"data":{"programsX":[{"id":1}]}}', 'data.programs')).rejects.toThrow('no array at "data.programs"');
    await expect(read('{"list":[]}', 'list.constructor')).rejects.toThrow('no array at');
    // A `__proto__` key in a record is an own key of that record, not its prototype.
    const [[record]] = await read('[{"__proto__":{"polluted":true},"id":1}]');
    expect(Object.getPrototypeOf(record)).toBe(Object.prototype);
    expect(Object.hasOwn(record, '__proto__')).toBe(true);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it.each([
    ['HTML', '<html>maintenance</html>', 'data', 'a body that is not JSON'],
    ['an empty body', '', 'data', 'a body that is not JSON'],
    ['a document cut short', '{"data":[{"id":1},{"id":2', 'data', 'a body that is not JSON'],
    ['a document followed by more', '{"data":[]} {"data":[]}', 'data', 'a body that is not JSON'],
    ['an object where the array should be', '{"data":{"id":1}}', 'data', 'no array at "data"'],
    ['a path that is not there', '{"other":[]}', 'data', 'no array at "data"'],
    ['the path twice', '{"data":[{"id":1}],"data":[{"id":2}]}', 'data', 'more than one value at "data"'],
    ['an object for a feed that should be an array', '{"data":[]}', undefined, 'a JSON document that is not an array'],
    ['a bare number', '42', undefined, 'a body that is not JSON'],
  ])('refuses %s', async (_name, text, items, message) => {
    await expect(read(text, items)).rejects.toThrow(message);
  });

  it('refuses a record larger than the cap, and any one value past it off the path, without gathering it whole', async () => {
    const big = 'x'.repeat(64 * 1024);
    await expect(read(`{"data":[{"id":1},{"id":2,"blob":"${big}"}]}`, 'data', { maxRecordBytes: 16 * 1024, size: 1024 })).rejects.toThrow(
      'a record or value larger than 16384 bytes',
    );
    await expect(read(`{"note":"${big}","data":[{"id":1}]}`, 'data', { maxRecordBytes: 16 * 1024, size: 1024 })).rejects.toThrow(
      'a record or value larger than 16384 bytes',
    );
    // Many records, each under the cap, are no record past it.
    const many = JSON.stringify({ data: Array.from({ length: 2000 }, (_, i) => ({ id: i, pad: 'y'.repeat(100) })) });
    const pages = await read(many, 'data', { maxRecordBytes: 16 * 1024, size: 1024, pageSize: 500 });
    expect(pages.map((p) => p.length)).toEqual([500, 500, 500, 500]);
  });

  it(`refuses nesting deeper than ${MAX_DEPTH} levels, in a record or off the path`, async () => {
    const deep = (n: number) => `${'['.repeat(n)}${']'.repeat(n)}`;
    await expect(read(`{"data":[{"id":1,"deep":${deep(MAX_DEPTH + 5)}}]}`, 'data', { size: 4096 })).rejects.toThrow(`deeper than ${MAX_DEPTH}`);
    await expect(read(`{"other":${deep(MAX_DEPTH + 5)},"data":[]}`, 'data', { size: 4096 })).rejects.toThrow(`deeper than ${MAX_DEPTH}`);
    expect(await read(`{"data":[{"id":1,"deep":${deep(20)}}]}`, 'data')).toHaveLength(1);
  });

  it("stops at the body's own error (a size cap, a cancel) and at an aborted signal", async () => {
    const failing = new Readable({
      read() {
        this.push(Buffer.from('{"data":[{"id":1},'));
        this.destroy(new Error('the body broke'));
      },
    });
    const it1 = jsonRecords(failing, 'data', { pageSize: 10, maxRecordBytes: 1024 });
    await expect(it1.next()).rejects.toThrow('the body broke');
    const controller = new AbortController();
    controller.abort(new Error('stopped'));
    const it2 = jsonRecords(body('[{"id":1}]'), undefined, { pageSize: 10, maxRecordBytes: 1024, signal: controller.signal });
    await expect(it2.next()).rejects.toThrow('stopped');
  });
});
