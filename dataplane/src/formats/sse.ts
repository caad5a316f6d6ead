/** Incremental Server-Sent Events parsing and encoding (WHATWG event-stream rules). */

export interface SseEvent {
  event?: string | undefined;
  data: string;
}

/** Feed decoded text in any chunking; complete events come out in order. */
export class SseParser {
  private buffer = '';
  private event: string | undefined;
  private data: string[] = [];

  push(text: string): SseEvent[] {
    this.buffer += text;
    const out: SseEvent[] = [];
    let start = 0;
    for (;;) {
      const nl = this.buffer.indexOf('\n', start);
      if (nl === -1) break;
      let line = this.buffer.slice(start, nl);
      start = nl + 1;
      if (line.endsWith('\r')) line = line.slice(0, -1);
      this.line(line, out);
    }
    this.buffer = this.buffer.slice(start);
    return out;
  }

  /** Flush at end of input: a final event without its blank line still counts. */
  end(): SseEvent[] {
    const out: SseEvent[] = [];
    if (this.buffer.length > 0) this.line(this.buffer.replace(/\r$/, ''), out);
    this.buffer = '';
    this.line('', out);
    return out;
  }

  private line(line: string, out: SseEvent[]): void {
    if (line === '') {
      if (this.data.length > 0) out.push({ event: this.event, data: this.data.join('\n') });
      this.event = undefined;
      this.data = [];
      return;
    }
    if (line.startsWith(':')) return;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') this.data.push(value);
    else if (field === 'event') this.event = value;
  }
}

export const sseData = (data: string): string => `data: ${data}\n\n`;
export const sseEvent = (event: string, data: string): string => `event: ${event}\ndata: ${data}\n\n`;
