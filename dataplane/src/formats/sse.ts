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
  private buffer = '';
  private event: string | undefined;
  /** The event's first data line, undefined before it. */
  private first: string | undefined;
  /** Its further data lines, when there are any. */
  private more: string[] | undefined;

  push(text: string): SseEvent[] {
    const buf = this.buffer.length === 0 ? text : this.buffer + text;
    const out: SseEvent[] = [];
    let start = 0;
    for (;;) {
      const nl = buf.indexOf('\n', start);
      if (nl === -1) break;
      this.line(buf, start, nl > start && buf.charCodeAt(nl - 1) === CR ? nl - 1 : nl, out);
      start = nl + 1;
    }
    this.buffer = start === 0 ? buf : buf.slice(start);
    return out;
  }

  /** Flush at end of input: a final event without its blank line still counts. */
  end(): SseEvent[] {
    const out: SseEvent[] = [];
    const rest = this.buffer;
    this.buffer = '';
    if (rest.length > 0) this.line(rest, 0, rest.endsWith('\r') ? rest.length - 1 : rest.length, out);
    this.line('', 0, 0, out);
    return out;
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
      return;
    }
    if (text.charCodeAt(start) === COLON) return;
    const colon = text.indexOf(':', start);
    const fieldEnd = colon === -1 || colon > end ? end : colon;
    let from = fieldEnd === end ? end : fieldEnd + 1;
    if (from < end && text.charCodeAt(from) === SPACE) from++;
    if (fieldEnd - start === 4 && text.startsWith('data', start)) {
      const value = text.slice(from, end);
      if (this.first === undefined) this.first = value;
      else (this.more ??= []).push(value);
    } else if (fieldEnd - start === 5 && text.startsWith('event', start)) {
      this.event = text.slice(from, end);
    }
  }
}

const CR = 13;
const COLON = 58;
const SPACE = 32;

export const sseData = (data: string): string => `data: ${data}\n\n`;
export const sseEvent = (event: string, data: string): string => `event: ${event}\ndata: ${data}\n\n`;
