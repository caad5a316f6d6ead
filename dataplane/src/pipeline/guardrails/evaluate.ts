/**
 * Precision and recall of the detectors on a labelled corpus (JSON lines of
 * {id, text, labels: [{guardrail, category}]}). A case is positive for a detector when it
 * carries one of its labels, predicted positive when the detector reports a finding at or
 * above the default threshold; PII and secrets are also scored per entity kind.
 */
import { DEFAULT_THRESHOLD } from './policy.ts';
import { detect as detectInjection } from './injection.ts';
import { detect as detectPii } from './pii.ts';
import { detect as detectSecrets } from './secrets.ts';
import { detect as detectToxicity } from './toxicity.ts';
import { GuardrailNames, type Detector, type Finding, type GuardrailName } from './types.ts';

export interface LabelledCase {
  id: string;
  text: string;
  labels: Array<{ guardrail: GuardrailName; category: string }>;
}

export interface Score {
  tp: number;
  fp: number;
  fn: number;
  precision: number;
  recall: number;
  f1: number;
}

export interface Mistake {
  id: string;
  guardrail: GuardrailName;
  kind: 'fp' | 'fn';
  expected: string[];
  predicted: string[];
}

export interface Evaluation {
  cases: number;
  byDetector: Record<GuardrailName, Score>;
  /** PII and secrets per entity kind, "pii/EMAIL", "secrets/JWT", ... */
  byCategory: Record<string, Score>;
  mistakes: Mistake[];
}

const DETECTORS: Record<GuardrailName, Detector> = {
  'prompt-injection': detectInjection,
  toxicity: detectToxicity,
  pii: detectPii,
  secrets: detectSecrets,
};

export function parseCases(jsonl: string): LabelledCase[] {
  return jsonl
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as LabelledCase);
}

function score(tp: number, fp: number, fn: number): Score {
  const precision = tp + fp === 0 ? 1 : tp / (tp + fp);
  const recall = tp + fn === 0 ? 1 : tp / (tp + fn);
  const f1 = precision + recall === 0 ? 0 : (2 * precision * recall) / (precision + recall);
  return { tp, fp, fn, precision, recall, f1 };
}

export function evaluate(cases: LabelledCase[], threshold = DEFAULT_THRESHOLD): Evaluation {
  const counts = new Map<string, { tp: number; fp: number; fn: number }>();
  const bump = (key: string, field: 'tp' | 'fp' | 'fn'): void => {
    const c = counts.get(key) ?? { tp: 0, fp: 0, fn: 0 };
    c[field]++;
    counts.set(key, c);
  };
  const mistakes: Mistake[] = [];
  for (const c of cases) {
    for (const g of GuardrailNames) {
      const expected = c.labels.filter((l) => l.guardrail === g).map((l) => l.category);
      const found: Finding[] = DETECTORS[g](c.text).filter((f) => f.score >= threshold);
      const predicted = [...new Set(found.map((f) => f.category))];
      const pos = expected.length > 0;
      const pred = predicted.length > 0;
      if (pos && pred) bump(g, 'tp');
      else if (pred) bump(g, 'fp');
      else if (pos) bump(g, 'fn');
      if (pos !== pred)
        mistakes.push({ id: c.id, guardrail: g, kind: pos ? 'fn' : 'fp', expected, predicted });
      if (g !== 'pii' && g !== 'secrets') continue;
      for (const cat of new Set([...expected, ...predicted])) {
        const e = expected.includes(cat);
        const p = predicted.includes(cat);
        bump(`${g}/${cat}`, e && p ? 'tp' : p ? 'fp' : 'fn');
      }
    }
  }
  const get = (k: string): Score => {
    const c = counts.get(k) ?? { tp: 0, fp: 0, fn: 0 };
    return score(c.tp, c.fp, c.fn);
  };
  const byDetector = Object.fromEntries(GuardrailNames.map((g) => [g, get(g)])) as Record<
    GuardrailName,
    Score
  >;
  const byCategory = Object.fromEntries(
    [...counts.keys()]
      .filter((k) => k.includes('/'))
      .sort()
      .map((k) => [k, get(k)]),
  );
  return { cases: cases.length, byDetector, byCategory, mistakes };
}
