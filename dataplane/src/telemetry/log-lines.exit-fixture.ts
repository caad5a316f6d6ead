/**
 * For log-lines.test.ts: logs the way main.ts does (batched, asynchronous stdout), then exits at
 * once, so only the exit hook can have written the lines.
 */
import { writeSync } from 'node:fs';
import pino from 'pino';
import { DEFAULT_LINE_BATCH, LineBatch } from './log-lines.ts';

const out = new LineBatch(pino.destination({ dest: 1, sync: false }), {
  ...DEFAULT_LINE_BATCH,
  writeSync: (chunk) => writeSync(1, chunk),
});
process.once('exit', () => out.flushSync());
const log = pino({ base: undefined, timestamp: false }, out);
for (let i = 0; i < 50; i++) log.info({ n: i }, 'request completed');
process.exit(0);
