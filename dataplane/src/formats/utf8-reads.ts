/**
 * Decodes a byte stream read by read. A read that ends on an ASCII byte cannot end inside a
 * multi-byte character, so when nothing is pending from the read before it, it decodes alone
 * (`Buffer#toString`, several times cheaper than a streaming TextDecoder call); a read ending
 * on a byte of 0x80 or above, and the read after it, go through the TextDecoder, which keeps
 * a character split between reads whole. A byte order mark opening the stream is dropped, as
 * the event-stream format (and a TextDecoder fed the whole stream) do.
 */
export class Utf8Reads {
  private readonly decoder = new TextDecoder('utf-8', { ignoreBOM: true });
  private pending = false;
  /** The first bytes while they could still be the start of a byte order mark. */
  private opening: Buffer | undefined = Buffer.alloc(0);

  decode(read: Buffer): string {
    let buf = read;
    if (this.opening !== undefined) {
      buf = this.opening.length > 0 ? Buffer.concat([this.opening, read]) : read;
      if (buf.length < BOM.length && BOM.subarray(0, buf.length).equals(buf)) {
        this.opening = buf;
        return '';
      }
      this.opening = undefined;
      if (BOM.equals(buf.subarray(0, BOM.length))) buf = buf.subarray(BOM.length);
    }
    if (buf.length === 0) return '';
    const asciiEnd = buf[buf.length - 1]! < 0x80;
    if (!this.pending && asciiEnd) return buf.toString('utf8');
    this.pending = !asciiEnd;
    return this.decoder.decode(buf, { stream: true });
  }
}

const BOM = Buffer.from([0xef, 0xbb, 0xbf]);
