/**
 * Figures of an entity detector (PII, secrets) on labelled rows: a row is positive when it
 * carries a label of the guardrail, detected when a finding of that category (any
 * category, for `anyCategory`) reaches the threshold. Benign rows measure false alarms.
 * F2 weighs recall twice: a missed card number costs more than a redacted order number.
 */
import { DEFAULT_THRESHOLD } from '../policy.ts';
import type { Detector, GuardrailName } from '../types.ts';
import type { Rate } from './evaluate.ts';

export interface EntityRow {
  id: string;
  text: string;
  labels: Array<{ guardrail: GuardrailName; category: string }>;
  kind?: string;
}

export interface EntityFigures {
  recall: Rate;
  precision: number;
  f2: number;
  /** Benign rows (no label of this guardrail) with any finding. */
  falseAlarms: Rate;
  /** Recall per labelled category, and per row kind when rows carry one. */
  recallBy: Record<string, Rate>;
}

const rate = (hit: number, of: number): Rate => ({ hit, of, rate: of === 0 ? 0 : hit / of });

export function evaluateEntities(
  rows: EntityRow[],
  guardrail: GuardrailName,
  detect: Detector,
  opts: { anyCategory?: boolean; threshold?: number } = {},
): EntityFigures {
  const threshold = opts.threshold ?? DEFAULT_THRESHOLD;
  let tp = 0;
  let fn = 0;
  let fp = 0;
  let alarms = 0;
  let benign = 0;
  const by = new Map<string, [number, number]>();
  const bump = (k: string, hit: boolean): void => {
    const c = by.get(k) ?? [0, 0];
    c[0] += hit ? 1 : 0;
    c[1]++;
    by.set(k, c);
  };
  for (const row of rows) {
    const found = detect(row.text).filter((f) => f.score >= threshold);
    const wanted = row.labels.filter((l) => l.guardrail === guardrail).map((l) => l.category);
    if (wanted.length === 0) {
      benign++;
      if (found.length > 0) {
        alarms++;
        fp++;
      }
      continue;
    }
    for (const cat of wanted) {
      const hit = found.some((f) => opts.anyCategory || f.category === cat);
      if (hit) tp++;
      else fn++;
      bump(cat, hit);
      if (row.kind) bump(row.kind, hit);
    }
    // Findings of a kind the row does not carry are false positives too.
    if (!opts.anyCategory)
      fp += new Set(found.map((f) => f.category).filter((c) => !wanted.includes(c))).size;
  }
  const precision = tp + fp === 0 ? 1 : tp / (tp + fp);
  const recall = rate(tp, tp + fn);
  const f2 =
    precision + recall.rate === 0 ? 0 : (5 * precision * recall.rate) / (4 * precision + recall.rate);
  return {
    recall,
    precision,
    f2,
    falseAlarms: rate(alarms, benign),
    recallBy: Object.fromEntries(
      [...by.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([k, [h, n]]) => [k, rate(h, n)]),
    ),
  };
}
