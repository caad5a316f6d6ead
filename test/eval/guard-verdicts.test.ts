/**
 * Locks in every finding of every detector on every guardrail evaluation text (and the
 * scanner's verdicts on the timing conversations; guard-verdicts.ts lists them): a change
 * meant only to make the scan faster must leave this digest alone. A change meant to
 * alter findings updates it, after diffing the dump against the previous one
 * (guard-verdicts.ts explains how) and re-running `npm run eval`.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { verdictLines } from './guard-verdicts.ts';

/** sha256 of `npx tsx test/eval/guard-verdicts.ts` output (one line per text, each ending in \n). */
const DIGEST = '5615285d5f73fea7b34e46d469833922b18cd0473cc0be73e471edfdbbf6875c';
const LINES = 14974;

describe('guardrail findings on the evaluation corpus', () => {
  it('are exactly the recorded ones (digest of every finding, score and span)', { timeout: 180_000 }, () => {
    const hash = createHash('sha256');
    let lines = 0;
    for (const line of verdictLines()) {
      hash.update(`${line}\n`);
      lines++;
    }
    expect(lines).toBe(LINES);
    expect(hash.digest('hex')).toBe(DIGEST);
  });
});
