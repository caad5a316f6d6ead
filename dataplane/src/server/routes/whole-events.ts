/**
 * The bytes of a piped event stream, released only up to the end of its last whole event. A
 * stream cut mid-event and then ended by the gateway's error event used to hand the reader the
 * open part first: the line break that ended it made the SDK parse a partial JSON event and
 * throw a SyntaxError before reaching the error. Upstream reads nearly always end on an event
 * boundary, so in practice each read is written as it comes, unchanged and without a copy.
 */
import { MAX_SSE_BYTES, SseTooLong } from '../../formats/sse.ts';

/**
 * The most kept past the last boundary: one event, whose data lines the parser bounds (each
 * line's `data: ` prefix included, see `DATA_LINE_OVERHEAD`) plus lines it does not hold
 * (comments, ids), which an upstream could send without end inside one event.
 */
export const MAX_KEPT_BYTES = 2 * MAX_SSE_BYTES;

export class WholeEvents {
  private kept: Buffer[] = [];
  private keptBytes = 0;

  constructor(private readonly maxBytes = MAX_KEPT_BYTES) {}

  /**
   * The bytes to write now, after `read` (decoded as `text`, which the parser was given and
   * found its last boundary at `boundary`, -1 for none); empty when the read ends inside an
   * event. Throws SseTooLong past the bound.
   */
  take(read: Buffer, text: string, boundary: number): Buffer {
    if (boundary === text.length && this.keptBytes === 0 && endsAscii(read)) return read;
    this.kept.push(read);
    this.keptBytes += read.length;
    // A read ending inside a UTF-8 character leaves bytes its text does not show yet; only the
    // next read says where they belong (a delay of one read, and only in this rare case).
    if (boundary !== -1 && endsAscii(read)) {
      const tail = boundary === text.length ? 0 : Buffer.byteLength(text.slice(boundary));
      const all = this.kept.length === 1 ? this.kept[0]! : Buffer.concat(this.kept, this.keptBytes);
      const cut = all.length - tail;
      // The tail is copied so that it does not keep the whole concatenation alive.
      this.kept = tail === 0 ? [] : [Buffer.from(all.subarray(cut))];
      this.keptBytes = tail;
      this.bound();
      return all.subarray(0, cut);
    }
    this.bound();
    return EMPTY;
  }

  private bound(): void {
    if (this.keptBytes > this.maxBytes)
      throw new SseTooLong(`upstream sent an event-stream event longer than ${this.maxBytes} bytes`);
  }

  /** Lets go of what is kept (the stream failed: the open event is never written). */
  drop(): void {
    this.kept = [];
    this.keptBytes = 0;
  }

  /** What is kept, handed over once the stream ended cleanly (a last event without its blank line). */
  rest(): Buffer {
    const rest = Buffer.concat(this.kept, this.keptBytes);
    this.drop();
    return rest;
  }
}

const EMPTY = Buffer.alloc(0);
const endsAscii = (b: Buffer): boolean => b.length === 0 || b[b.length - 1]! < 0x80;
