/** A pino destination that keeps each JSON line it is given, for tests that read the log back. */
import { Writable } from 'node:stream';

export interface LogLine {
  level: number;
  msg: string;
  [field: string]: unknown;
}

/** Pino writes one JSON line per call; each is parsed into `lines` as it arrives. */
export function logSink(lines: LogLine[]): Writable {
  let rest = '';
  return new Writable({
    write(chunk: Buffer, _enc, done) {
      const parts = (rest + chunk.toString('utf8')).split('\n');
      rest = parts.pop() ?? '';
      for (const p of parts) if (p.trim()) lines.push(JSON.parse(p) as LogLine);
      done();
    },
  });
}
