/**
 * Regression gate on the labelled data (test/eval/guardrails-eval.ts prints the full table).
 * The corpus must keep the targets: precision >= 0.95 and recall >= 0.9 per detector. The
 * held-out set was never tuned on; it is held to precision >= 0.95 and to the recall it had
 * when it was written (>= 0.85), so a change that loses generality fails here too.
 * holdout2 (prompt injection and toxicity in many phrasings and languages, with at least as
 * many benign look-alikes) was written before the detectors were read, then used to improve
 * them; it is held just below the recall reached (1.0 for both), so one case may slip.
 * probes/ holds later probe sets for prompt injection and toxicity only (texts are short and
 * carry no PII or secret labels); they are pooled, because one file has too few benign
 * toxic look-alikes for a per-file precision to be stable, and held just below what they
 * reach (recall 0.99 and 1.0, precision 0.99 and 0.97).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { evaluate, parseCases } from './evaluate.ts';

const data = (name: string): string =>
  fileURLToPath(new URL(`../../../../test/data/guardrails/${name}`, import.meta.url));

describe.each([
  { file: 'corpus.jsonl', recall: 0.9 },
  { file: 'holdout.jsonl', recall: 0.9 },
  { file: 'holdout2.jsonl', recall: 0.95 },
])('$file', ({ file, recall }) => {
  const ev = evaluate(parseCases(readFileSync(data(file), 'utf8')));
  it.each(Object.entries(ev.byDetector))(
    `%s keeps precision >= 0.95 and recall >= ${recall}`,
    (_name, score) => {
      expect(score.precision).toBeGreaterThanOrEqual(0.95);
      expect(score.recall).toBeGreaterThanOrEqual(recall);
    },
  );
});

describe('probes/ (pooled)', () => {
  const dir = data('probes');
  const text = readdirSync(dir)
    .filter((f) => f.endsWith('.jsonl'))
    .map((f) => readFileSync(`${dir}/${f}`, 'utf8'))
    .join('\n');
  const ev = evaluate(parseCases(text));
  it.each(['prompt-injection', 'toxicity'] as const)(
    '%s keeps precision >= 0.95 and recall >= 0.98',
    (name) => {
      const score = ev.byDetector[name];
      expect(score.precision).toBeGreaterThanOrEqual(0.95);
      expect(score.recall).toBeGreaterThanOrEqual(0.98);
    },
  );
});
