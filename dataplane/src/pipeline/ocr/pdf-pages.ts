/**
 * How many pages an inline PDF may have, for the OCR budget hold. The provider bills the pages
 * its PDF reader finds, so this must never be below that: page objects are counted where they
 * are written plainly and inside FlateDecode object streams (where PDF 1.5+ writers put them),
 * and the page tree's own `/Count` is a second lower bound. Whatever cannot be read within the
 * bounds (another filter, a predictor, a corrupt or oversized stream, too many streams) gives
 * the ceiling, never the smaller visible count. Pure.
 */
import { inflateSync } from 'node:zlib';

export interface PdfCountBounds {
  /** The most pages a document can have: the answer when the count is unknown. */
  ceiling: number;
  /** Object streams inflated at most; one more gives the ceiling (each costs ~10 µs at least). */
  maxObjectStreams: number;
  /** Inflated bytes kept across all object streams; past it, the ceiling. Bounds memory and CPU. */
  maxInflatedBytes: number;
}

export const PDF_COUNT_BOUNDS: Omit<PdfCountBounds, 'ceiling'> = {
  maxObjectStreams: 500,
  maxInflatedBytes: 4 * 1024 * 1024,
};

// A PDF name ends at white space or a delimiter: `/Page` is not `/Pages` nor `/Page1`.
const END = '(?![^\\s/<>\\[\\]()%{}])';
const PAGE = new RegExp(`/Type\\s*/Page${END}`, 'g');
const PAGE_TREE = new RegExp(`/Type\\s*/Pages${END}`);
const COUNT = /\/Count\s+(\d{1,9})/g;
// `/First` marks an object stream even where `/Type /ObjStm` is missing (readers do not need it).
const OBJECT_STREAM = new RegExp(`/Type\\s*/ObjStm${END}|/First\\s`);
const FILTER = new RegExp(`/Filter${END}`, 'g');
const FLATE = new RegExp(`^\\s*(?:/FlateDecode|\\[\\s*/FlateDecode\\s*\\])${END}`);
const STREAM = /stream(?:\r\n|\n|\r)/;
// Segments end where an object or a stream ends; an object written without `endobj` (readers
// find it from the xref) is still cut off at its stream's `endstream`.
const SEGMENT_END = /endstream|endobj/;

// Every name looked for here is letters only, so one spelt with escapes has only letters
// before its first `#`: a cheap test that spares decoding the binary data of most streams.
const ESCAPED_NAME = /\/[A-Za-z]*#[0-9A-Fa-f]{2}/;

// What every pattern here needs: a /Type, a /First, or a name spelt with escapes.
const RELEVANT = /\/(?:Type|First|[A-Za-z]*#[0-9A-Fa-f]{2})/;

/** `#xx` escapes decoded, as a PDF reader does: `/P#61ge` is `/Page`. */
function names(s: string): string {
  return ESCAPED_NAME.test(s)
    ? s.replace(/#([0-9A-Fa-f]{2})/g, (_, h: string) => String.fromCharCode(parseInt(h, 16)))
    : s;
}

function occurrences(s: string, re: RegExp): number {
  return s.match(re)?.length ?? 0;
}

/** The largest `/Count` of a text holding a page-tree node; 0 when it holds none. */
function treeCount(s: string): number {
  if (!PAGE_TREE.test(s)) return 0;
  let n = 0;
  for (const m of s.matchAll(COUNT)) n = Math.max(n, Number(m[1]));
  return n;
}

/** How a stream's bytes are encoded: none, Flate alone (readable here), or anything else. */
function encoding(segment: string): 'none' | 'flate' | 'other' {
  if (/\/DecodeParms/.test(segment)) return 'other';
  let found = false;
  for (const m of segment.matchAll(FILTER)) {
    found = true;
    const at = m.index + m[0].length;
    if (!FLATE.test(segment.slice(at, at + 64))) return 'other';
  }
  return found ? 'flate' : 'none';
}

/**
 * The objects of an inflated object stream, cut at the offsets of its header so a `/Count`
 * is read only next to its own `/Type /Pages`; the whole text when the header is unreadable.
 */
function objectsOf(body: string, segment: string): string[] {
  const first = /\/First\s+(\d{1,9})/.exec(segment);
  const start = first ? Number(first[1]) : NaN;
  if (!(start > 0 && start <= body.length)) return [body];
  const nums = body.slice(0, start).match(/\d+/g) ?? [];
  const offsets = nums.filter((_, i) => i % 2 === 1).map((o) => start + Number(o));
  if (offsets.length === 0 || offsets.some((o, i) => o > body.length || (i > 0 && o < offsets[i - 1]!)))
    return [body];
  return offsets.map((o, i) => body.slice(o, offsets[i + 1] ?? body.length));
}

/**
 * The most pages `bytes` (a PDF) can have, from 1 to `ceiling`: the larger of its page objects
 * (plain and in object streams) and its page tree's `/Count`; `ceiling` when it finds none or
 * cannot read every object stream within the bounds.
 */
export function countPdfPages(bytes: Buffer, bounds: PdfCountBounds): number {
  const { ceiling } = bounds;
  const text = bytes.toString('latin1');
  let pages = 0;
  let tree = 0;
  let streams = 0;
  let room = bounds.maxInflatedBytes;
  for (const raw of text.split(SEGMENT_END)) {
    // Binary stream data mostly: one scan rules out everything looked for below.
    if (!RELEVANT.test(raw)) continue;
    // The segments cover the text: page objects anywhere in it are counted, once.
    const segment = names(raw);
    pages += occurrences(segment, PAGE);
    tree = Math.max(tree, treeCount(segment));
    // Plain object streams were counted with the rest of the text.
    if (!OBJECT_STREAM.test(segment)) continue;
    const kind = encoding(segment);
    if (kind === 'none') continue;
    if (kind === 'other' || ++streams > bounds.maxObjectStreams || room < 1) return ceiling;
    const keyword = STREAM.exec(raw);
    if (!keyword) return ceiling;
    let body: Buffer;
    try {
      // Bytes after the inflated end (the line break before `endstream`) are ignored by zlib.
      body = inflateSync(Buffer.from(raw.slice(keyword.index + keyword[0].length), 'latin1'), {
        maxOutputLength: room,
      });
    } catch {
      return ceiling; // corrupt, truncated, or past the bound (ERR_BUFFER_TOO_LARGE)
    }
    room -= body.length;
    // Offsets in the header count raw bytes, so cut before decoding names.
    const objects = body.toString('latin1');
    const decoded = names(objects);
    pages += occurrences(decoded, PAGE);
    if (PAGE_TREE.test(decoded))
      for (const o of objectsOf(objects, segment)) tree = Math.max(tree, treeCount(names(o)));
    if (Math.max(pages, tree) >= ceiling) return ceiling;
  }
  const n = Math.max(pages, tree);
  return n === 0 ? ceiling : Math.min(n, ceiling);
}
