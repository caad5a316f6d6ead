/** Incremental Server-Sent Events parsing and encoding (WHATWG event-stream rules). */

export interface SseEvent {
  event?: string | undefined;
  data: string;
}

/**
 * Feed decoded text in any chunking; complete events come out in order. A stream relay runs
 * this on every event of every stream, so a line is read in place in the text it arrived in:
 * a `data:` line costs one slice (its value), and an event of one data line (all of OpenAI's,
 * Anthropic's and Gemini's) is that slice, with no array to join. Lines end with CR LF, LF or
 * a lone CR, as the format says.
 */
export class SseParser {
  /** The pieces of a line that has not ended yet, kept apart so a long line is copied once. */
  private pending: string[] = [];
  private pendingUnits = 0;
  /** UTF-8 bytes of `pending`, once they are counted (see `safeUnits`); -1 before. */
  private pendingBytes = -1;
  /** The last text ended with a CR: an LF opening the next one ends no line of its own. */
  private afterCr = false;
  private event: string | undefined;
  /** The event's first data line, undefined before it. */
  private first: string | undefined;
  /** Its further data lines, when there are any. */
  private more: string[] | undefined;
  /** How many of the event's data lines (`first`, then `more`) are copies already (`detachOpen`). */
  private detached = 0;
  private eventUnits = 0;
  private eventBytes = -1;
  /** A line of an event (any field, a comment) was read since the last blank line. */
  private open = false;
  private lastBoundary = -1;
  /**
   * Up to this many UTF-16 code units no text can pass `maxBytes` in UTF-8 (a code unit is 3
   * bytes at most), so the bound costs a comparison per line until a line or event is this
   * long; only then are its bytes counted, each piece once.
   */
  private readonly safeUnits: number;

  /**
   * `maxBytes` bounds one line and one event's data, in UTF-8 bytes as the upstream sent them,
   * each data line charged `DATA_LINE_OVERHEAD` more: beyond it the upstream is at fault.
   */
  constructor(private readonly maxBytes = MAX_SSE_BYTES) {
    this.safeUnits = Math.floor(maxBytes / 3);
  }

  /**
   * Where in the text last pushed the stream last stood between events: no line held, no
   * event open, no CR waiting for its LF; -1 when nowhere in it. A relay that passes the bytes
   * on writes up to there, so a stream cut later never leaves its reader half an event.
   */
  get boundary(): number {
    return this.lastBoundary;
  }

  push(text: string): SseEvent[] {
    const out: SseEvent[] = [];
    let start = 0;
    if (this.afterCr && text.length > 0) {
      this.afterCr = false;
      if (text.charCodeAt(0) === LF) start = 1;
    }
    this.lastBoundary = !this.open && this.pendingUnits === 0 && !this.afterCr ? start : -1;
    // Lines end with LF or CR LF in every provider's streams; a lone CR is rare, so a text
    // without one is read by LF alone (a failed CR search when it has no CR at all), and only a
    // text with one takes the slower way that looks for both.
    const loneCr = hasLoneCr(text, start);
    const first = loneCr ? firstBreak(text, start) : text.indexOf('\n', start);
    if (first === -1) {
      if (start < text.length) this.hold(start === 0 ? text : text.slice(start));
      return out;
    }
    let buf = text;
    if (this.pendingUnits > 0) {
      // The pending pieces hold no line break (and `start` is 0: a CR emptied them), so the
      // text's breaks are theirs shifted by the pieces' length.
      buf = this.pending.join('') + text;
      this.pending = [];
      this.pendingUnits = 0;
      this.pendingBytes = -1;
    }
    // The text is the end of `buf` (held pieces may open it): `shift` maps buf to text.
    const shift = buf.length - text.length;
    if (loneCr) this.anyBreaks(buf, start, shift, out);
    else this.lfBreaks(buf, start, first + shift, shift, out);
    if (this.first !== undefined) this.detachOpen();
    return out;
  }

  /**
   * The data lines of an event still open when a read ends wait for a later read; as slices
   * they would each keep alive the whole read they came in (V8 keeps a slice as a view of its
   * parent), comments and all, which the event's bound does not see: 4,000 reads of a 16-byte
   * data line and a 64 KiB comment kept 262 MB for 68 KB of data. So each is copied here, once;
   * an event that ends within its read (nearly all) copies nothing. A line that has not ended
   * and the event's name keep at most one read each, as they are replaced by the next.
   */
  private detachOpen(): void {
    if (this.detached === 0) {
      this.first = detach(this.first!);
      this.detached = 1;
    }
    const more = this.more;
    if (more === undefined) return;
    for (let i = this.detached - 1; i < more.length; i++) more[i] = detach(more[i]!);
    this.detached = more.length + 1;
  }

  /** The lines of `buf` from `start`, the first ending at the LF at `lf`; no lone CR is in it. */
  private lfBreaks(buf: string, start: number, lf: number, shift: number, out: SseEvent[]): void {
    let at = start;
    let nl = lf;
    while (nl !== -1) {
      this.line(buf, at, nl > at && buf.charCodeAt(nl - 1) === CR ? nl - 1 : nl, out);
      at = nl + 1;
      if (!this.open) this.lastBoundary = at - shift;
      nl = buf.indexOf('\n', at);
    }
    if (at < buf.length) this.hold(buf.slice(at));
  }

  /** The lines of `buf` from `start`, ended by CR LF, LF or CR. */
  private anyBreaks(buf: string, start: number, shift: number, out: SseEvent[]): void {
    let at = start;
    let lf = buf.indexOf('\n', at);
    let cr = buf.indexOf('\r', at);
    for (;;) {
      if (cr !== -1 && (lf === -1 || cr < lf)) {
        this.line(buf, at, cr, out);
        if (cr + 1 === buf.length) {
          this.afterCr = true;
          return;
        }
        at = buf.charCodeAt(cr + 1) === LF ? cr + 2 : cr + 1;
        cr = buf.indexOf('\r', at);
        if (lf !== -1 && lf < at) lf = buf.indexOf('\n', at);
      } else if (lf !== -1) {
        this.line(buf, at, lf, out);
        at = lf + 1;
        lf = buf.indexOf('\n', at);
      } else break;
      if (!this.open) this.lastBoundary = at - shift;
    }
    if (at < buf.length) this.hold(buf.slice(at));
  }

  /** Flush at end of input: a final event without its blank line still counts. */
  end(): SseEvent[] {
    const out: SseEvent[] = [];
    const rest = this.pending.join('');
    this.pending = [];
    this.pendingUnits = 0;
    this.pendingBytes = -1;
    this.afterCr = false;
    if (rest.length > 0) this.line(rest, 0, rest.length, out);
    this.line('', 0, 0, out);
    return out;
  }

  private hold(piece: string): void {
    this.pending.push(piece);
    this.pendingUnits += piece.length;
    if (this.pendingUnits <= this.safeUnits) return;
    this.pendingBytes =
      this.pendingBytes === -1 ? utf8Bytes(this.pending) : this.pendingBytes + Buffer.byteLength(piece);
    if (this.pendingBytes > this.maxBytes)
      throw new SseTooLong(`upstream sent an event-stream line longer than ${this.maxBytes} bytes`);
  }

  /** The line `text[start, end)`, its line ending excluded. */
  private line(text: string, start: number, end: number, out: SseEvent[]): void {
    this.open = start !== end;
    if (start === end) {
      if (this.first !== undefined) {
        // No spread of `more` into a new array: an event of many lines would hold it twice.
        const data = this.more === undefined ? this.first : `${this.first}\n${this.more.join('\n')}`;
        out.push({ event: this.event, data });
      }
      this.event = undefined;
      this.first = undefined;
      this.more = undefined;
      this.detached = 0;
      this.eventUnits = 0;
      this.eventBytes = -1;
      return;
    }
    // Only `data` and `event` matter, so the field name is checked in place rather than searched
    // for: a line without a colon costs nothing however long the read is.
    if (isField(text, start, end, 'data')) {
      const value = text.slice(valueStart(text, start + 4, end), end);
      this.eventUnits += value.length + 1 + (this.first === undefined ? 0 : DATA_LINE_OVERHEAD);
      if (this.eventUnits > this.safeUnits) this.countEventBytes(value);
      if (this.first === undefined) this.first = value;
      else (this.more ??= []).push(value);
    } else if (isField(text, start, end, 'event')) {
      this.event = text.slice(valueStart(text, start + 5, end), end);
    }
  }

  /**
   * Adds the data line `value` (the LF joining it, and `DATA_LINE_OVERHEAD` unless it is the
   * first) to the event's bytes, past `safeUnits`.
   */
  private countEventBytes(value: string): void {
    if (this.eventBytes === -1) {
      this.eventBytes = 0;
      if (this.first !== undefined) this.eventBytes += Buffer.byteLength(this.first) + 1;
      if (this.more !== undefined)
        this.eventBytes += utf8Bytes(this.more) + this.more.length * (1 + DATA_LINE_OVERHEAD);
    }
    this.eventBytes += Buffer.byteLength(value) + 1 + (this.first === undefined ? 0 : DATA_LINE_OVERHEAD);
    if (this.eventBytes > this.maxBytes)
      throw new SseTooLong(`upstream sent an event-stream event longer than ${this.maxBytes} bytes`);
  }
}

/**
 * An upstream's line or event went past the parser's bound: a fault of the upstream (an endless
 * line would otherwise grow a buffer until the process runs out of memory).
 */
export class SseTooLong extends Error {
  override name = 'SseTooLong';
}

/**
 * 16 MiB: far above any real event (a streamed base64 image is a few MB), low enough that a
 * broken upstream cannot exhaust memory with one stream. Counted in the upstream's bytes, so
 * text of 3-byte characters is bounded at the same size as ASCII.
 */
export const MAX_SSE_BYTES = 16 * 1024 * 1024;

/**
 * What each data line of an event after its first costs against the bound besides its bytes:
 * an open event keeps those lines as strings in an array, each a string header and a slot
 * (~10-30 bytes), so counted by their bytes alone 16.7M empty `data:` lines (96 MB sent) held
 * 170 MB, ~11 times the bound. Charged 32 bytes each, an event holds at most ~508k lines. The
 * first line is held alone, so an event of one line is bounded by its bytes as before. 32 is
 * also more than a line's own `data: ` prefix and LF, so an event's data lines on the wire
 * exceed the bound by at most the first line's prefix (a relay keeping them, whole-events.ts,
 * relies on it).
 */
export const DATA_LINE_OVERHEAD = 32;

/**
 * A copy of `s` that shares no memory with the string it was sliced from: V8 flattens the
 * concatenation into a new string before slicing it (about 0.1 µs for 1 KB).
 */
const detach = (s: string): string => ` ${s}`.slice(1);

const utf8Bytes = (pieces: readonly string[]): number => {
  let n = 0;
  for (const p of pieces) n += Buffer.byteLength(p);
  return n;
};

/** Whether `text[start, end)` is the field `name`: the name, then a colon or the line's end. */
const isField = (text: string, start: number, end: number, name: string): boolean => {
  const after = start + name.length;
  return after <= end && text.startsWith(name, start) && (after === end || text.charCodeAt(after) === COLON);
};

/** Past the colon and one optional space after a field name ending at `at`. */
const valueStart = (text: string, at: number, end: number): number => {
  if (at === end) return end;
  const from = at + 1;
  return from < end && text.charCodeAt(from) === SPACE ? from + 1 : from;
};

const LF = 10;
const CR = 13;
/** Whether `text` has a CR from `start` not followed by an LF (its last character included). */
const hasLoneCr = (text: string, start: number): boolean => {
  for (let cr = text.indexOf('\r', start); cr !== -1; cr = text.indexOf('\r', cr + 1))
    if (text.charCodeAt(cr + 1) !== LF) return true;
  return false;
};

/** Where the first line of `text` from `start` ends, at a CR or an LF; -1 when it does not. */
const firstBreak = (text: string, start: number): number => {
  const lf = text.indexOf('\n', start);
  const cr = text.indexOf('\r', start);
  return lf === -1 || (cr !== -1 && cr < lf) ? cr : lf;
};
const COLON = 58;
const SPACE = 32;

export const sseData = (data: string): string => `data: ${data}\n\n`;
export const sseEvent = (event: string, data: string): string => `event: ${event}\ndata: ${data}\n\n`;
