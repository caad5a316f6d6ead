/**
 * Decodes a byte stream read by read. A read that ends on an ASCII byte cannot end inside a
 * multi-byte character, so when nothing is pending from the read before it decodes alone
 * (`Buffer#toString`, several times cheaper than a streaming TextDecoder call); a read ending
 * on a byte of 0x80 or above, and the read after it, go through the TextDecoder, which keeps
 * a character split between reads whole. The first read goes through it too: it drops a
 * leading byte order mark, as the event-stream format asks.
 */
export class Utf8Reads {
  private readonly decoder = new TextDecoder();
  private pending = true;

  decode(buf: Buffer): string {
    if (buf.length === 0) return '';
    const asciiEnd = buf[buf.length - 1]! < 0x80;
    if (!this.pending && asciiEnd) return buf.toString('utf8');
    this.pending = !asciiEnd;
    return this.decoder.decode(buf, { stream: true });
  }
}
