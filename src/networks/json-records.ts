// A JSON feed read as it streams in. JSON.parse needs the whole text and then holds the whole
// document as objects (a 120 MB feed took the daemon to 3.4 GB and blocked its event loop for tens
// of seconds), so the body is tokenized chunk by chunk (stream-json) instead, and only the records
// of the definition's items array are assembled, one at a time: memory holds a page of records,
// never the document, whatever its size. What lies off the items path is skipped token by token.
import { StringDecoder } from 'node:string_decoder';
import type { Readable } from 'node:stream';
import { setImmediate as nextTurn } from 'node:timers/promises';
import Assembler from 'stream-json/assembler.js';
import { jsonParser, type Token } from 'stream-json/parser.js';

/** The feed is not the JSON its definition describes; `excerpt` is the start of its body. */
export class FeedFormatError extends Error {
  constructor(
    message: string,
    readonly excerpt: string,
  ) {
    super(message);
  }
}

export interface JsonRecordOptions {
  /** Records per page. */
  pageSize: number;
  /** Largest record (and largest single value anywhere in the document), in bytes of the body. */
  maxRecordBytes: number;
  signal?: AbortSignal;
}

/** Deepest nesting read, anywhere (a record's raw data is stored as JSON, which recursion writes). */
export const MAX_DEPTH = 256;
/** The event loop gets a turn at least this often (ms) while a feed is parsed. */
const SLICE_MS = 5;
/** How much of the body's start an error keeps for its excerpt. */
const EXCERPT_CHARS = 1024;

const VALUE_STARTS = new Set<Token['name']>(['startObject', 'startArray', 'stringValue', 'numberValue', 'nullValue', 'trueValue', 'falseValue']);

/** A container on the way to the items array (containers off the way are skipped, not tracked). */
interface Frame {
  array: boolean;
  /** The current key (object) or index (array) inside it. */
  at: string;
  index: number;
  /** Its path is the items path's first `level` segments. */
  level: number;
}

/**
 * Yields the records (objects) of the array at `items` (a dotted path of own keys or array
 * indexes, as atPath reads it; absent: the document is the array) in pages of `pageSize`.
 * Elements that are not objects are passed over. Throws FeedFormatError when the body is not JSON,
 * has no array at the path (or two), nests deeper than MAX_DEPTH, or holds a record or a value
 * larger than `maxRecordBytes`; the body's own errors (size cap, timeout, cancel) pass through.
 */
export async function* jsonRecords(body: Readable, items: string | undefined, options: JsonRecordOptions): AsyncGenerator<Record<string, unknown>[]> {
  const path = items ? items.split('.') : [];
  const where = items ? `"${items}"` : 'the top of the document';
  // Packed values only (no per-chunk string tokens): a third of the tokens, and what Assembler reads.
  const tokenize = jsonParser({ streamValues: false });
  const decoder = new StringDecoder('utf8');
  let excerpt = '';
  const fail = (what: string) => new FeedFormatError(what, excerpt);

  const frames: Frame[] = [];
  /** Open containers being skipped (off the items path, or elements of the items array that are not objects). */
  let skip = 0;
  /** The frame of the items array while inside it. */
  let inItems: Frame | null = null;
  let found = false;
  let rootDone = false;
  let record: Assembler | null = null;
  let page: Record<string, unknown>[] = [];

  // Sizes are counted in whole chunks of the body: a record or a value is as large as the bytes
  // read since the chunk it started in (a bound, not an exact size; the socket's chunks are small).
  let read = 0;
  let recordFrom = 0;
  let lastTokenAt = 0;
  let lastTurn = performance.now();

  const valueStarts = (token: Token) => {
    const parent = frames.at(-1);
    let level = -1;
    if (!parent) {
      // The root (the tokenizer refuses a second document after it).
      level = 0;
    } else {
      if (parent.array) parent.at = String(++parent.index);
      if (parent.level >= 0 && parent.level < path.length && parent.at === path[parent.level]) level = parent.level + 1;
    }
    const container = token.name === 'startObject' || token.name === 'startArray';
    if (level === path.length) {
      // The items path: an array of records, once.
      if (found) throw fail(`more than one value at ${where}`);
      found = true;
      if (token.name !== 'startArray') throw fail(items ? `no array at ${where}` : 'a JSON document that is not an array');
      const frame: Frame = { array: true, at: '', index: -1, level: -1 };
      frames.push(frame);
      inItems = frame;
    } else if (container) {
      if (level < 0) skip++;
      else frames.push({ array: token.name === 'startArray', at: '', index: -1, level });
    }
    if (!container && frames.length === 0) rootDone = true;
  };

  const take = (token: Token): void => {
    if (record) {
      record.consume(token);
      if (record.depth > MAX_DEPTH) throw fail(`JSON nested deeper than ${MAX_DEPTH} levels`);
      if (record.done) {
        page.push(record.current as Record<string, unknown>);
        record = null;
      }
      return;
    }
    switch (token.name) {
      case 'startObject':
      case 'startArray':
        if (skip) {
          skip++;
        } else if (inItems && frames.at(-1) === inItems) {
          inItems.index++;
          if (token.name === 'startObject') {
            record = new Assembler();
            record.consume(token);
            recordFrom = read;
          } else {
            skip++;
          }
        } else {
          valueStarts(token);
        }
        if (frames.length + skip > MAX_DEPTH) throw fail(`JSON nested deeper than ${MAX_DEPTH} levels`);
        return;
      case 'endObject':
      case 'endArray':
        if (skip) {
          skip--;
          return;
        }
        if (frames.pop() === inItems) inItems = null;
        if (frames.length === 0) rootDone = true;
        return;
      case 'keyValue':
        if (!skip) {
          const top = frames.at(-1);
          if (top) top.at = token.value;
        }
        return;
      default:
        // A scalar: an element of the items array that is not a record, or a value on the way.
        if (skip || !VALUE_STARTS.has(token.name)) return;
        if (inItems && frames.at(-1) === inItems) inItems.index++;
        else valueStarts(token);
    }
  };

  for await (const chunk of body) {
    options.signal?.throwIfAborted();
    const bytes = chunk as Buffer;
    let text = decoder.write(bytes);
    if (read === 0 && text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    if (excerpt.length < EXCERPT_CHARS) excerpt += text.slice(0, EXCERPT_CHARS - excerpt.length);
    const chunkStart = read;
    read += bytes.length;
    let out: ReturnType<typeof tokenize>;
    try {
      out = tokenize(text);
    } catch {
      throw fail('a body that is not JSON');
    }
    const tokens = typeof out === 'symbol' ? [] : out.values;
    if (tokens.length) lastTokenAt = chunkStart;
    for (const token of tokens) {
      take(token);
      if (page.length >= options.pageSize) {
        yield page;
        page = [];
        lastTurn = performance.now();
      }
    }
    // A record, or a value outside one (a string the parser is still gathering), past the cap: the
    // feed is refused rather than held in memory, as a CSV line longer than the cap is.
    if ((record && read - recordFrom > options.maxRecordBytes) || read - lastTokenAt > options.maxRecordBytes)
      throw fail(`a record or value larger than ${options.maxRecordBytes} bytes`);
    // Parsing never holds the event loop for long, even when the sync takes pages faster than
    // the socket fills (a resumed walk skipping the pages it stored).
    if (performance.now() - lastTurn > SLICE_MS) {
      await nextTurn();
      lastTurn = performance.now();
    }
  }
  const rest = decoder.end();
  try {
    const out = rest ? tokenize(rest) : null;
    if (out && typeof out !== 'symbol') for (const token of out.values) take(token);
  } catch {
    throw fail('a body that is not JSON');
  }
  // The tokenizer is not flushed: a document whose top-level container closed is complete, and
  // any other document (empty, cut short, a bare scalar) is not the array the feed must be.
  if (!rootDone || record || frames.length || skip) throw fail('a body that is not JSON');
  if (!found) throw fail(items ? `no array at ${where}` : 'a JSON document that is not an array');
  if (page.length) yield page;
}
