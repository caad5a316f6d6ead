/**
 * Section "cache-lookup" (issue 5): semantic-cache lookup latency in this process, with the
 * builtin embedder and the in-process vector index, at 10k and 100k entries in one
 * partition (the worst case: a lookup only ever searches its own partition). A lookup is
 * what the cache stage does before it reads an entry: embed query and context in one call,
 * build the DualScore probe, search the index. Probes are near-duplicates of stored
 * questions (would-be hits) and new questions (misses), alternating. One index grows from
 * the smallest size to the largest, measured at each.
 */
import { performance } from 'node:perf_hooks';
import { createBuiltinEmbedder } from '../../dataplane/src/pipeline/cache/builtin-embedder.ts';
import { embedForCache, type Embedder } from '../../dataplane/src/pipeline/cache/embedder.ts';
import { resolveCachePolicy, type ResolvedCachePolicy } from '../../dataplane/src/pipeline/cache/policy.ts';
import { chooseBand, entryVector, probeVector } from '../../dataplane/src/pipeline/cache/score.ts';
import { partitionKey } from '../../dataplane/src/stores/cache-entries/partition.ts';
import { MemoryVectorIndex } from '../../dataplane/src/stores/vectors/memory/index.ts';
import { below, skipped } from './checks.ts';
import { sectionList, sectionNumber } from './options.ts';
import type { BenchContext, Check, Section, SectionResult, Table } from './section.ts';
import { fmtMs, summariseTimes, type Timing } from './timing.ts';

/** Issue 5: lookup p50 at 100k entries. */
export const LOOKUP_P50_TARGET_MS = 1;
export const TARGET_SIZE = 100_000;
/** Hits the stage asks the index for (it then reads entries best first). */
const SEARCH_K = 4;
const WARMUP_PROBES = 200;

export interface CacheSettings {
  sizes: number[];
  /** Timed lookups per size, half near-duplicates, half new questions. */
  probes: number;
}

export function readCacheSettings(env: NodeJS.ProcessEnv): CacheSettings {
  const sizes = sectionList(env, 'BENCH_CACHE_SIZES', ['10000', '100000']).map(Number);
  if (sizes.some((n) => !Number.isInteger(n) || n < 1))
    throw new Error(`BENCH_CACHE_SIZES must be whole numbers >= 1, got "${env.BENCH_CACHE_SIZES}"`);
  return {
    sizes: [...new Set(sizes)].sort((a, b) => a - b),
    probes: sectionNumber(env, 'BENCH_CACHE_PROBES', 1000, 'count'),
  };
}

/** Deterministic PRNG (mulberry32), so every run stores and probes the same texts. */
export function prng(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// prettier-ignore
const SUBJECTS = ['a CSV export', 'the billing service', 'a React form', 'my Postgres replica', 'a Kafka consumer', 'the login page', 'an S3 bucket', 'a cron job', 'the search index', 'a Helm chart', 'my laptop battery', 'a sourdough starter', 'the garden hose', 'a tax return', 'a job interview', 'the quarterly report', 'a wedding speech', 'my running plan', 'a mortgage offer', 'the team retrospective', 'a TLS certificate', 'a Python virtualenv', 'the mobile app', 'a Redis cluster', 'my home router', 'a load balancer', 'the onboarding guide', 'a pivot table', 'a slide deck', 'the invoice template', 'a GraphQL schema', 'a Terraform module', 'the CI pipeline', 'a Docker image', 'my bike chain', 'a tomato plant', 'a cover letter', 'the product roadmap', 'a Rust crate', 'the analytics dashboard'];
// prettier-ignore
const ACTIONS = ['speed up', 'debug', 'set up', 'clean up', 'secure', 'back up', 'migrate', 'test', 'document', 'monitor', 'shrink', 'split', 'rename', 'schedule', 'translate', 'summarise', 'review', 'automate', 'fix', 'explain'];
// prettier-ignore
const SITUATIONS = ['after an upgrade', 'on a tight budget', 'without downtime', 'for a beginner', 'in production', 'on Windows', 'on a Raspberry Pi', 'before Friday', 'with two people', 'in under an hour', 'for a small team', 'when it keeps failing', 'without losing data', 'for the first time', 'in a monorepo'];
// prettier-ignore
const DETAILS = ['We use GitHub Actions.', 'The data is about 2 GB.', 'It runs on Kubernetes.', 'My manager wants a plan.', 'I only have a phone.', 'It worked last week.', 'We are a team of five.', 'The logs show timeouts.', 'Budget is 100 euros.', 'It must stay GDPR compliant.', 'I am new to this.', 'There are 300 users.', 'The deadline is Monday.', 'We tried restarting it.', 'It is written in Go.', 'Customers are complaining.', 'I prefer open-source tools.', 'The office is in Berlin.', 'It has to work offline.', 'Our CTO is sceptical.'];
const TEMPLATES: ReadonlyArray<(s: string, a: string, w: string) => string> = [
  (s, a, w) => `How can I ${a} ${s} ${w}?`,
  (s, a, w) => `What is the best way to ${a} ${s} ${w}?`,
  (s, a, w) => `Can you help me ${a} ${s} ${w}`,
  (s, a, w) => `I need to ${a} ${s} ${w}. Where do I start?`,
  (s, a, w) => `Give me a checklist to ${a} ${s} ${w}.`,
];

export interface Question {
  query: string;
  context: string;
}

/** Generates questions (about 1.2M distinct ones), a third of them with an earlier turn as context. */
export function questionSource(seed: number): () => Question {
  const random = prng(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)]!;
  const ask = (): string => {
    const q = pick(TEMPLATES)(pick(SUBJECTS), pick(ACTIONS), pick(SITUATIONS));
    return random() < 0.5 ? q : `${q} ${pick(DETAILS)}`;
  };
  return () => ({
    query: ask(),
    context:
      random() < 1 / 3 ? `system: You are a concise assistant.\nuser: ${ask()}\nassistant: ${ask()}` : '',
  });
}

/** The same question with a small change: what a near-duplicate request looks like. */
export function nearDuplicate(q: string, variant: number): string {
  switch (variant % 3) {
    case 0:
      return q.toLowerCase().replace(/[?.!]/g, '');
    case 1:
      return `${q} Thanks!`;
    default:
      return `Quick question: ${q}`;
  }
}

export interface SizeResult {
  entries: number;
  fillSeconds: number;
  indexMb: number;
  lookup: { hit: Timing; miss: Timing; all: Timing };
  search: { hit: Timing; miss: Timing; all: Timing };
  /** Near-duplicate probes whose best hit was the entry they were made from. */
  sourceFound: number;
  /** Near-duplicate probes whose best score reached a band other than MISS. */
  hitBand: number;
  nearDuplicates: number;
}

async function measureSize(
  index: MemoryVectorIndex,
  partition: string,
  embedder: Embedder,
  policy: ResolvedCachePolicy,
  stored: Question[],
  fillSeconds: number,
  probes: number,
): Promise<SizeResult> {
  const random = prng(stored.length);
  const fresh = questionSource(stored.length * 7 + 1);
  const samples = {
    lookup: { hit: [] as number[], miss: [] as number[] },
    search: { hit: [] as number[], miss: [] as number[] },
  };
  let sourceFound = 0;
  let hitBand = 0;
  for (let i = 0; i < WARMUP_PROBES + probes; i++) {
    const kind = i % 2 === 0 ? 'hit' : 'miss';
    const sourceId = Math.floor(random() * stored.length);
    const source = stored[sourceId]!;
    const q = kind === 'hit' ? { query: nearDuplicate(source.query, i), context: source.context } : fresh();
    const t0 = performance.now();
    const v = await embedForCache(embedder, q);
    const probe = probeVector(v.query, v.context, policy.alpha, policy.beta);
    const t1 = performance.now();
    const hits = await index.search(partition, probe, SEARCH_K);
    const t2 = performance.now();
    if (i < WARMUP_PROBES) continue;
    samples.lookup[kind].push(t2 - t0);
    samples.search[kind].push(t2 - t1);
    if (kind === 'hit') {
      if (hits[0]?.id === String(sourceId)) sourceFound++;
      if (hits[0] && chooseBand(hits[0].score, policy.thresholds) !== 'MISS') hitBand++;
    }
  }
  const three = (s: { hit: number[]; miss: number[] }) => ({
    hit: summariseTimes(s.hit),
    miss: summariseTimes(s.miss),
    all: summariseTimes([...s.hit, ...s.miss]),
  });
  const stats = await index.stats();
  return {
    entries: stats.entries,
    fillSeconds,
    indexMb: stats.memoryBytes / 1048576,
    lookup: three(samples.lookup),
    search: three(samples.search),
    sourceFound,
    hitBand,
    nearDuplicates: samples.lookup.hit.length,
  };
}

export function cacheChecks(results: readonly SizeResult[]): Check[] {
  const name = `cache lookup p50 @${TARGET_SIZE.toLocaleString('en')} entries (builtin embedder)`;
  const r = results.find((x) => x.entries === TARGET_SIZE);
  if (!r)
    return [
      skipped(
        name,
        `< ${LOOKUP_P50_TARGET_MS.toFixed(3)} ms`,
        `no run at ${TARGET_SIZE} entries (BENCH_CACHE_SIZES)`,
      ),
    ];
  return [below({ name, value: r.lookup.all.p50, unit: ' ms', digits: 3 }, LOOKUP_P50_TARGET_MS)];
}

export function cacheTables(results: readonly SizeResult[]): Table[] {
  const pct = (n: number, of: number): string => (of > 0 ? `${((100 * n) / of).toFixed(0)}%` : '-');
  return [
    {
      title: `Semantic-cache lookup, builtin embedder + in-process index, one partition (ms; lookup = embed query and context + probe + search k=${SEARCH_K})`,
      columns: [
        'entries',
        'probes',
        'n',
        'lookup p50',
        'lookup p99',
        'search p50',
        'search p99',
        'lookup max',
      ],
      rows: results.flatMap((r) =>
        (['all', 'hit', 'miss'] as const).map((kind) => [
          String(r.entries),
          kind === 'all' ? 'all' : kind === 'hit' ? 'near-duplicate' : 'new question',
          String(r.lookup[kind].iterations),
          fmtMs(r.lookup[kind].p50),
          fmtMs(r.lookup[kind].p99),
          fmtMs(r.search[kind].p50),
          fmtMs(r.search[kind].p99),
          fmtMs(r.lookup[kind].max),
        ]),
      ),
    },
    {
      title:
        'Index at each size (near-duplicate probes: best hit is their source entry / reaches a band above MISS)',
      columns: ['entries', 'fill s (embed + insert)', 'index MB', 'source found', 'band above MISS'],
      rows: results.map((r) => [
        String(r.entries),
        r.fillSeconds.toFixed(1),
        r.indexMb.toFixed(0),
        pct(r.sourceFound, r.nearDuplicates),
        pct(r.hitBand, r.nearDuplicates),
      ]),
    },
  ];
}

async function run(ctx: BenchContext): Promise<SectionResult> {
  const settings = readCacheSettings(process.env);
  const embedder = createBuiltinEmbedder();
  const policy = resolveCachePolicy(undefined);
  const largest = settings.sizes[settings.sizes.length - 1]!;
  const index = new MemoryVectorIndex({ maxEntries: largest });
  const partition = partitionKey('bench', 'openai', 'bench');
  const expiresAt = Date.now() + 24 * 3_600_000;
  const next = questionSource(20_250_314);
  const seen = new Set<string>();
  const stored: Question[] = [];
  const results: SizeResult[] = [];
  ctx.log(
    `embedder ${embedder.id}; sizes ${settings.sizes.join(', ')}; ${settings.probes} timed lookups each`,
  );
  try {
    let fillMs = 0;
    for (const size of settings.sizes) {
      const start = performance.now();
      while (stored.length < size) {
        const q = next();
        const key = `${q.query}\n${q.context}`;
        if (seen.has(key)) continue;
        seen.add(key);
        const v = await embedForCache(embedder, q);
        await index.upsert(partition, String(stored.length), entryVector(v.query, v.context), expiresAt);
        stored.push(q);
      }
      fillMs += performance.now() - start;
      const r = await measureSize(index, partition, embedder, policy, stored, fillMs / 1000, settings.probes);
      results.push(r);
      ctx.log(
        `  ${String(r.entries).padStart(7)} entries (filled in ${r.fillSeconds.toFixed(1)} s, ${r.indexMb.toFixed(0)} MB): lookup p50 ${fmtMs(r.lookup.all.p50)} ms  p99 ${fmtMs(r.lookup.all.p99)} ms; search p50 ${fmtMs(r.search.all.p50)} ms`,
      );
    }
  } finally {
    await index.close();
  }
  return {
    tables: cacheTables(results),
    checks: cacheChecks(results),
    notes: ['in-process lookup only; a hit served end to end against a miss (issue 5) is not measured here'],
    data: {
      embedder: embedder.id,
      alpha: policy.alpha,
      beta: policy.beta,
      searchK: SEARCH_K,
      ...settings,
      results,
    },
  };
}

export const cacheLookup: Section = {
  name: 'cache-lookup',
  title: 'Semantic-cache lookup: builtin embedder + in-process index at 10k and 100k entries',
  run,
};
