/** Incremental Server-Sent Events parsing and encoding (WHATWG event-stream rules). */

export interface SseEvent {
  event?: string | undefined;
  data: string;
}

/**
 * Feed decoded text in any chunking; complete events come out in order. A stream relay runs
 * this on every event of every stream, so a line is read in place in the text it arrived in:
 * a `data:` line costs one slice (its value), and an event of one data line (all of OpenAI's,
 * Anthropic's and Gemini's) is that slice, with no array to join.
 */
export class SseParser {
  /** The pieces of a line that has not ended yet, kept apart so a long line is copied once. */
  private pending: string[] = [];
  private pendingChars = 0;
  private event: string | undefined;
  /** The event's first data line, undefined before it. */
  private first: string | undefined;
  /** Its further data lines, when there are any. */
  private more: string[] | undefined;
  private eventChars = 0;

  /** `maxChars` bounds one line and one event's data: beyond it the upstream is at fault. */
  constructor(private readonly maxChars = MAX_SSE_CHARS) {}

  push(text: string): SseEvent[] {
    const out: SseEvent[] = [];
    let nl = text.indexOf('\n');
    if (nl === -1) {
      this.hold(text);
      return out;
    }
    let buf = text;
    if (this.pendingChars > 0) {
      // The pending pieces hold no line break, so the first one is where it was found in `text`.
      buf = this.pending.join('') + text;
      nl += this.pendingChars;
      this.pending = [];
      this.pendingChars = 0;
    }
    let start = 0;
    while (nl !== -1) {
      this.line(buf, start, nl > start && buf.charCodeAt(nl - 1) === CR ? nl - 1 : nl, out);
      start = nl + 1;
      nl = buf.indexOf('\n', start);
    }
    if (start < buf.length) this.hold(buf.slice(start));
    return out;
  }

  /** Flush at end of input: a final event without its blank line still counts. */
  end(): SseEvent[] {
    const out: SseEvent[] = [];
    const rest = this.pending.join('');
    this.pending = [];
    this.pendingChars = 0;
    if (rest.length > 0) this.line(rest, 0, rest.endsWith('\r') ? rest.length - 1 : rest.length, out);
    this.line('', 0, 0, out);
    return out;
  }

  private hold(piece: string): void {
    this.pendingChars += piece.length;
    if (this.pendingChars > this.maxChars)
      throw new SseTooLong(`upstream sent an event-stream line longer than ${this.maxChars} characters`);
    this.pending.push(piece);
  }

  /** The line `text[start, end)`, its line ending excluded. */
  private line(text: string, start: number, end: number, out: SseEvent[]): void {
    if (start === end) {
      if (this.first !== undefined) {
        const data = this.more === undefined ? this.first : [this.first, ...this.more].join('\n');
        out.push({ event: this.event, data });
      }
      this.event = undefined;
      this.first = undefined;
      this.more = undefined;
      this.eventChars = 0;
      return;
    }
    // Only `data` and `event` matter, so the field name is checked in place rather than searched
    // for: a line without a colon costs nothing however long the read is.
    if (isField(text, start, end, 'data')) {
      const value = text.slice(valueStart(text, start + 4, end), end);
      this.eventChars += value.length + 1;
      if (this.eventChars > this.maxChars)
        throw new SseTooLong(`upstream sent an event-stream event longer than ${this.maxChars} characters`);
      if (this.first === undefined) this.first = value;
      else (this.more ??= []).push(value);
    } else if (isField(text, start, end, 'event')) {
      this.event = text.slice(valueStart(text, start + 5, end), end);
    }
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
 * 16 Mi characters: far above any real event (a streamed base64 image is a few MB), low enough
 * that a broken upstream cannot exhaust memory with one stream.
 */
export const MAX_SSE_CHARS = 16 * 1024 * 1024;

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

const CR = 13;
const COLON = 58;
const SPACE = 32;

export const sseData = (data: string): string => `data: ${data}\n\n`;
export const sseEvent = (event: string, data: string): string => `event: ${event}\ndata: ${data}\n\n`;
