/**
 * Cascade evidence for issue 13: `npx tsx test/eval/routing-cascade.ts`.
 *
 * If the gateway asked the weak model first and escalated when its own answer looks unsure,
 * how well would that evidence rank "weak model fails", and what would the cascade cost? Scores
 * the four fresh domains of test/data/routing/outcomes/cascade/ with the signals and rule fixed
 * beforehand in UNSEEN.md ("Cascade evidence"), next to the shipped no-call score and the token
 * count on the same rows. It chooses nothing: signals and thresholds are the pre-registered ones.
 */
import { fileURLToPath } from 'node:url';
import { auc } from '../../dataplane/src/pipeline/routing/auc.ts';
import { classifyDifficulty } from '../../dataplane/src/pipeline/routing/classify.ts';
import { aucInterval, asRequest, loadOutcomes } from './routing-outcomes.ts';
import { staticEmbedding } from './routing-static-embedding.ts';

export interface CascadeRow {
  group: string;
  text: string;
  weakFails: boolean;
  strongFails: boolean;
  tokenUnsure: number;
  statedUnsure: number;
  haikuFails: boolean;
  haikuStatedUnsure: number;
}

export const CASCADE_DOMAINS = [
  { file: 'sciq.jsonl', name: 'SciQ test' },
  { file: 'lsat-ar.jsonl', name: 'LSAT-AR' },
  { file: 'sat-en.jsonl', name: 'SAT-EN' },
  { file: 'boolq.jsonl', name: 'BoolQ (closed-book)' },
] as const;
/** Pre-registered thresholds: escalate when the signal is above t. */
export const TOKEN_THRESHOLDS = [0.01, 0.05, 0.1, 0.2, 0.3, 0.5] as const;
export const STATED_THRESHOLDS = [0.05, 0.1, 0.2, 0.3, 0.5] as const;
const TARGET = 0.65;

export interface CascadeCost {
  /** Share of rows sent on to the strong model. */
  escalated: number;
  /** Share of the weak model's failures among the escalated rows. */
  failsCaught: number;
  /** Accuracy when the strong model answers what is escalated and the weak one the rest. */
  accuracy: number;
}

/** What escalating every row whose unsureness is above `t` costs and buys. */
export function cascadeCost(
  unsure: readonly number[],
  weakFails: readonly boolean[],
  strongFails: readonly boolean[],
  t: number,
): CascadeCost {
  let escalated = 0;
  let caught = 0;
  let correct = 0;
  const fails = weakFails.filter(Boolean).length;
  unsure.forEach((u, i) => {
    const up = u > t;
    if (up) escalated++;
    if (up && weakFails[i]) caught++;
    if (up ? !strongFails[i] : !weakFails[i]) correct++;
  });
  const n = unsure.length;
  return {
    escalated: escalated / n,
    failsCaught: fails ? caught / fails : Number.NaN,
    accuracy: correct / n,
  };
}

/** Share of failures among the `k` rows a score ranks highest (ties broken by row order). */
export function failsCaughtAtBudget(
  score: readonly number[],
  weakFails: readonly boolean[],
  k: number,
): number {
  const order = score.map((s, i) => [s, i] as const).sort((a, b) => b[0] - a[0] || a[1] - b[1]);
  const fails = weakFails.filter(Boolean).length;
  const caught = order.slice(0, k).filter(([, i]) => weakFails[i]).length;
  return fails ? caught / fails : Number.NaN;
}

const f3 = (x: number): string => x.toFixed(3);
const pct = (x: number): string => `${(x * 100).toFixed(1)} %`;
const withCi = (s: readonly number[], y: readonly boolean[]): string => {
  const [lo, hi] = aucInterval(s, y);
  return `${f3(auc(s, y))} (95 % ${lo.toFixed(2)}–${hi.toFixed(2)})`;
};

export function printRoutingCascade(): void {
  const verdict: string[] = [];
  for (const d of CASCADE_DOMAINS) {
    const rows = loadOutcomes(`cascade/${d.file}`) as unknown as CascadeRow[];
    const y = rows.map((r) => r.weakFails);
    const strong = rows.map((r) => r.strongFails);
    const token = rows.map((r) => r.tokenUnsure);
    const stated = rows.map((r) => r.statedUnsure);
    const shipped = rows.map((r) => classifyDifficulty(asRequest(r.text)).weakFails);
    const logTokens = rows.map((r) => Math.log1p(staticEmbedding(r.text).tokens));
    const fails = y.filter(Boolean).length;
    const tokenAuc = auc(token, y);
    const [tokenLo] = aucInterval(token, y);
    verdict.push(`${d.name} ${f3(tokenAuc)}${tokenAuc >= TARGET ? '' : ' (below)'}`);
    console.log(
      `cascade, ${d.name}: ${rows.length} items, Llama-3.1-8B fails ${fails} (${pct(fails / rows.length)}), ` +
        `70B fails ${strong.filter(Boolean).length}\n` +
        `  AUC weak-fails: token unsureness (T, primary) ${withCi(token, y)}` +
        `${tokenLo >= TARGET ? ', lower bound clears 0.65' : ''}\n` +
        `                  stated unsureness (S) ${withCi(stated, y)}\n` +
        `                  shipped no-call probability ${withCi(shipped, y)}; log(1 + tokens) ${withCi(logTokens, y)}\n` +
        `  claude-3-haiku fails ${rows.filter((r) => r.haikuFails).length}: stated unsureness AUC ${withCi(
          rows.map((r) => r.haikuStatedUnsure),
          rows.map((r) => r.haikuFails),
        )}`,
    );
    const alone = (f: readonly boolean[]): string => pct(f.filter((x) => !x).length / rows.length);
    console.log(`  cost (8B alone ${alone(y)} correct, 70B alone ${alone(strong)}):`);
    for (const t of TOKEN_THRESHOLDS) {
      const c = cascadeCost(token, y, strong, t);
      const k = Math.round(c.escalated * rows.length);
      console.log(
        `    T > ${t.toFixed(2)}: escalate ${pct(c.escalated)}, catches ${pct(c.failsCaught)} of 8B fails, ` +
          `cascade ${pct(c.accuracy)} correct; shipped score escalating as many catches ${pct(
            failsCaughtAtBudget(shipped, y, k),
          )}`,
      );
    }
    for (const t of STATED_THRESHOLDS) {
      const c = cascadeCost(stated, y, strong, t);
      console.log(
        `    S > ${t.toFixed(2)}: escalate ${pct(c.escalated)}, catches ${pct(c.failsCaught)} of 8B fails, ` +
          `cascade ${pct(c.accuracy)} correct`,
      );
    }
  }
  const met = verdict.filter((v) => !v.endsWith('(below)')).length;
  console.log(
    `cascade verdict (pre-registered: T's AUC >= ${TARGET} on each of four fresh domains): ` +
      `${met === CASCADE_DOMAINS.length ? 'met' : `not on every domain (${met} of ${CASCADE_DOMAINS.length})`}: ${verdict.join(', ')}`,
  );
}

if (process.argv[1] === fileURLToPath(import.meta.url)) printRoutingCascade();
