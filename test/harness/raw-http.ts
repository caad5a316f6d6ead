/**
 * HTTP/1.1 over a bare TCP socket, for what clients hide: malformed and pipelined requests
 * reach the server exactly as written, and every byte it answers (each head, in order) is kept.
 */
import { connect, type Socket } from 'node:net';
import { until } from './gateway-spawn.ts';

export interface RawAnswer {
  status: number;
  /** Lower-cased names; a repeated header keeps its last value. */
  headers: Record<string, string>;
  /** The body text (Content-Length framed; a chunked body is left unparsed in `rest`). */
  body: string;
}

/** Every Content-Length framed answer in `text`, in order; whatever follows the last one is dropped. */
export function parseAnswers(text: string): RawAnswer[] {
  const out: RawAnswer[] = [];
  let at = 0;
  while (at < text.length) {
    const headEnd = text.indexOf('\r\n\r\n', at);
    if (headEnd === -1) break;
    const [statusLine = '', ...lines] = text.slice(at, headEnd).split('\r\n');
    const headers: Record<string, string> = {};
    for (const line of lines) {
      const i = line.indexOf(':');
      headers[line.slice(0, i).toLowerCase()] = line.slice(i + 1).trim();
    }
    const length = Number(headers['content-length'] ?? NaN);
    if (!Number.isInteger(length)) break;
    out.push({
      status: Number(statusLine.split(' ')[1]),
      headers,
      body: text.slice(headEnd + 4, headEnd + 4 + length),
    });
    at = headEnd + 4 + length;
  }
  return out;
}

/** A chat completion request as raw HTTP/1.1 bytes, Content-Length framed, keyed with `key`. */
export function rawChat(key: string, body: Record<string, unknown>): string {
  const json = JSON.stringify(body);
  return (
    `POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\n` +
    `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(json)}\r\n\r\n${json}`
  );
}

/** How many HTTP status lines the server wrote, wherever they sit in the byte stream. */
export const statusLines = (text: string): number => text.match(/HTTP\/1\.1 \d{3} /g)?.length ?? 0;

export class RawConnection {
  private readonly socket: Socket;
  private received = '';
  /** Resolves when the server has closed the connection (or it failed). */
  readonly closed: Promise<void>;

  constructor(url: string) {
    const { hostname, port } = new URL(url);
    this.socket = connect(Number(port), hostname);
    this.socket.setEncoding('latin1');
    this.socket.on('data', (d: string) => (this.received += d));
    this.socket.on('error', () => undefined);
    this.closed = new Promise((resolve) => this.socket.on('close', () => resolve()));
  }

  /** Everything received so far. */
  get text(): string {
    return this.received;
  }

  send(bytes: string | Uint8Array): this {
    this.socket.write(bytes);
    return this;
  }

  /** Waits until what was received satisfies `check`. */
  async receive(check: (text: string) => boolean, timeoutMs = 5_000): Promise<string> {
    await until(() => check(this.received), timeoutMs);
    return this.received;
  }

  /** Sends `bytes` on a new connection and resolves with the answers once the server closes it. */
  static async exchange(url: string, bytes: string): Promise<RawAnswer[]> {
    const c = new RawConnection(url).send(bytes);
    await c.closed;
    return parseAnswers(c.text);
  }

  close(): void {
    this.socket.destroy();
  }
}
