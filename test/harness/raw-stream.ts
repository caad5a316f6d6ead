/**
 * A streamed chat completion over plain node:http, for what SDKs and fetch hide: the HTTP
 * trailers (sent after the body) and the raw SSE events.
 */
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';

export interface RawStream {
  status: number;
  headers: IncomingHttpHeaders;
  trailers: NodeJS.Dict<string>;
  /** The whole SSE body. */
  text: string;
  /** The JSON payloads of its `data:` events ([DONE] left out). */
  events: Record<string, unknown>[];
}

export function rawStream(
  url: string,
  headers: Record<string, string>,
  body: Record<string, unknown>,
): Promise<RawStream> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      url,
      { method: 'POST', headers: { 'content-type': 'application/json', ...headers } },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('error', reject);
        // Trailers are known only once the body has ended.
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            trailers: res.trailers,
            text,
            events: text
              .split('\n')
              .filter((l) => l.startsWith('data: ') && l !== 'data: [DONE]')
              .map((l) => JSON.parse(l.slice('data: '.length)) as Record<string, unknown>),
          }),
        );
      },
    );
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}
