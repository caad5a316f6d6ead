/**
 * Figures of the prompt-injection and toxicity checks (rules and model together, at the
 * default threshold) on a learned split (test/data/guardrails/learned/*.jsonl): recall,
 * precision, false-positive rate on benign look-alikes and on all benign texts, recall per
 * attack kind, per language and per source. Rows carry `source`, `kind` and `lang` beside
 * the corpus fields.
 */
import { detect as detectInjection } from '../injection.ts';
import { prepare } from '../normalize.ts';
import { DEFAULT_THRESHOLD } from '../policy.ts';
import { detect as detectToxicity } from '../toxicity.ts';
import type { Finding, GuardrailName } from '../types.ts';

export interface SplitCase {
  id: string;
  text: string;
  labels: Array<{ guardrail: GuardrailName; category: string }>;
  source: string;
  kind: string;
  lang: string;
}

export interface Rate {
  hit: number;
  of: number;
  rate: number;
}

export interface CheckFigures {
  recall: Rate;
  precision: number;
  /** Benign texts built to look like positives (role-play, security talk, quoted attacks). */
  fpLookalike: Rate;
  /** Every benign text of the split. */
  fpAll: Rate;
  recallBy: Record<string, Rate>;
  f1: number;
}

/** Benign kinds that share wording with attacks or abuse; the repo's own benign probes too. */
const LOOKALIKE_KINDS = new Set(['lookalike', 'roleplay', 'long_roleplay_benign', 'none']);

export function parseSplit(jsonl: string): SplitCase[] {
  return jsonl
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as SplitCase);
}

const rate = (hit: number, of: number): Rate => ({ hit, of, rate: of === 0 ? 0 : hit / of });

function bump(map: Map<string, [number, number]>, key: string, hit: boolean): void {
  const c = map.get(key) ?? [0, 0];
  c[0] += hit ? 1 : 0;
  c[1] += 1;
  map.set(key, c);
}

const fires = (fs: Finding[], threshold: number): boolean => fs.some((f) => f.score >= threshold);

export function evaluateSplit(
  cases: SplitCase[],
  threshold = DEFAULT_THRESHOLD,
): Record<'prompt-injection' | 'toxicity', CheckFigures> {
  const out = {} as Record<'prompt-injection' | 'toxicity', CheckFigures>;
  const preds = cases.map((c) => {
    const prep = prepare(c.text);
    return {
      'prompt-injection': fires(detectInjection(c.text, prep), threshold),
      toxicity: fires(detectToxicity(c.text, prep), threshold),
    };
  });
  for (const g of ['prompt-injection', 'toxicity'] as const) {
    let tp = 0;
    let fp = 0;
    let fn = 0;
    let negAll = 0;
    let fpLook = 0;
    let negLook = 0;
    const by = new Map<string, [number, number]>();
    cases.forEach((c, i) => {
      const label = c.labels.find((l) => l.guardrail === g);
      const pred = preds[i]?.[g] ?? false;
      if (label) {
        if (pred) tp++;
        else fn++;
        bump(by, `kind:${g === 'toxicity' ? label.category : c.kind}`, pred);
        if (c.lang !== '?') bump(by, `lang:${c.lang}`, pred);
        bump(by, `source:${c.source}`, pred);
      } else {
        negAll++;
        if (pred) fp++;
        if (LOOKALIKE_KINDS.has(c.kind) || c.source.startsWith('gantry:')) {
          negLook++;
          if (pred) fpLook++;
        }
      }
    });
    const precision = tp + fp === 0 ? 1 : tp / (tp + fp);
    const recall = rate(tp, tp + fn);
    out[g] = {
      recall,
      precision,
      fpLookalike: rate(fpLook, negLook),
      fpAll: rate(fp, negAll),
      recallBy: Object.fromEntries(
        [...by.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([k, [h, n]]) => [k, rate(h, n)]),
      ),
      f1: precision + recall.rate === 0 ? 0 : (2 * precision * recall.rate) / (precision + recall.rate),
    };
  }
  return out;
}
