/**
 * Semantic-cache lookup latency: `npx tsx test/eval/cache-bench.ts [sizes...]` (default 10000
 * 100000). For each size, fills one partition of the in-process vector index with entries of
 * generated questions and conversations embedded by the builtin embedder, then times
 *   - search: the index lookup alone (probe vector in, best DualScore hit out);
 *   - lookup: embedding query and context (one call) + building the probe + search;
 * for near-duplicates of stored questions (hits) and for new questions (misses), and checks
 * the hits against an exact scan (recall: the index found the best entry whenever its
 * DualScore reached the TWEAK threshold).
 */
import { performance } from 'node:perf_hooks';
import { createBuiltinEmbedder } from '../../dataplane/src/pipeline/cache/builtin-embedder.ts';
import { embedForCache } from '../../dataplane/src/pipeline/cache/embedder.ts';
import { entryVector, probeVector } from '../../dataplane/src/pipeline/cache/score.ts';
import { partitionKey } from '../../dataplane/src/stores/cache-entries/partition.ts';
import { MemoryVectorIndex } from '../../dataplane/src/stores/vectors/memory/index.ts';

const ALPHA = 0.7;
const BETA = 0.3;
const TWEAK = 0.85;
const PROBES = 2000;
/** Probes also checked against an exact scan (slow: every entry scored). */
const RECALL_PROBES = 200;

let seed = 20250314;
function random(): number {
  seed = (seed + 0x6d2b79f5) >>> 0;
  let t = seed;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)] as T;

// prettier-ignore
const NOUNS = ['list', 'dictionary', 'array', 'string', 'file', 'directory', 'database', 'table', 'index', 'query', 'server', 'client', 'socket', 'thread', 'process', 'queue', 'stack', 'tree', 'graph', 'cache', 'token', 'session', 'cookie', 'header', 'request', 'response', 'stream', 'buffer', 'promise', 'callback', 'closure', 'class', 'interface', 'module', 'package', 'container', 'image', 'volume', 'cluster', 'pod', 'service', 'deployment', 'secret', 'certificate', 'key', 'password', 'user', 'account', 'invoice', 'payment', 'order', 'customer', 'product', 'price', 'discount', 'report', 'chart', 'spreadsheet', 'column', 'row', 'formula', 'email', 'meeting', 'calendar', 'deadline', 'budget', 'forecast', 'contract', 'policy', 'recipe', 'bread', 'pasta', 'sauce', 'garden', 'tomato', 'rose', 'lawn', 'bicycle', 'engine', 'battery', 'tire', 'flight', 'hotel', 'visa', 'passport', 'museum', 'river', 'mountain', 'volcano', 'planet', 'star', 'galaxy', 'atom', 'molecule', 'protein', 'cell', 'virus', 'vaccine', 'muscle', 'vitamin', 'poem', 'novel', 'essay', 'letter', 'speech', 'song', 'guitar', 'piano', 'painting', 'camera', 'photo', 'video', 'podcast', 'website', 'logo', 'font', 'color', 'button', 'form', 'login', 'migration', 'backup', 'log', 'metric', 'alert', 'dashboard', 'bug', 'test', 'release', 'branch', 'commit', 'merge', 'conflict', 'loop', 'function', 'variable', 'exception', 'timeout', 'regex', 'date', 'timezone', 'currency', 'tax', 'mortgage', 'loan', 'salary', 'resume', 'interview'];
// prettier-ignore
const VERBS = ['sort', 'reverse', 'parse', 'validate', 'create', 'delete', 'update', 'rename', 'copy', 'merge', 'split', 'compress', 'encrypt', 'debug', 'optimize', 'deploy', 'monitor', 'backup', 'restore', 'migrate', 'test', 'cache', 'index', 'format', 'convert', 'export', 'import', 'cook', 'bake', 'grow', 'prune', 'repair', 'clean', 'paint', 'write', 'translate', 'summarize', 'explain', 'compare', 'plan', 'estimate', 'calculate', 'negotiate', 'cancel', 'schedule'];
// prettier-ignore
const PLACES = ['in Python', 'in JavaScript', 'in Go', 'in Rust', 'in Java', 'in SQL', 'in Excel', 'on Linux', 'on Windows', 'on a Mac', 'in Kubernetes', 'with Docker', 'at home', 'for beginners', 'for a small business', 'in winter', 'on a budget', 'quickly', 'safely', 'without losing data'];
// prettier-ignore
const ADJECTIVES = ['large', 'small', 'nested', 'empty', 'broken', 'slow', 'old', 'new', 'remote', 'local', 'shared', 'private', 'public', 'encrypted', 'compressed', 'sorted', 'duplicate', 'missing', 'corrupted', 'temporary'];
const TEMPLATES: readonly (() => string)[] = [
  () => `How do I ${pick(VERBS)} a ${pick(ADJECTIVES)} ${pick(NOUNS)} ${pick(PLACES)}?`,
  () => `What is the difference between a ${pick(NOUNS)} and a ${pick(NOUNS)} ${pick(PLACES)}?`,
  () => `Why does my ${pick(NOUNS)} ${pick(VERBS)} so slowly when the ${pick(NOUNS)} is ${pick(ADJECTIVES)}?`,
  () => `Explain how to ${pick(VERBS)} the ${pick(NOUNS)} of a ${pick(ADJECTIVES)} ${pick(NOUNS)}`,
  () =>
    `Can you ${pick(VERBS)} this ${pick(NOUNS)} for me: ${pick(ADJECTIVES)} ${pick(NOUNS)} ${pick(NOUNS)}`,
  () => `What is the best way to ${pick(VERBS)} ${pick(ADJECTIVES)} ${pick(NOUNS)}s ${pick(PLACES)}?`,
  () =>
    `Write a short ${pick(['poem', 'email', 'summary', 'story', 'note'])} about a ${pick(ADJECTIVES)} ${pick(NOUNS)}`,
];
// prettier-ignore
const SYSTEMS = ['', '', 'system: You are a helpful assistant.', 'system: You are a senior software engineer. Answer concisely.', 'system: You answer questions for the support team of an online shop.'];

function conversation(): string {
  const system = pick(SYSTEMS);
  const turns = random() < 0.5 ? 0 : 1 + Math.floor(random() * 3);
  const lines = system ? [system] : [];
  for (let i = 0; i < turns; i++) lines.push(`user: ${pick(TEMPLATES)()}`, `assistant: ${pick(TEMPLATES)()}`);
  return lines.join('\n');
}

/** A near-duplicate of a stored question: the same words with a small change. */
function paraphrase(q: string): string {
  switch (Math.floor(random() * 4)) {
    case 0:
      return q.toLowerCase().replace(/[?:]/g, '');
    case 1:
      return `${q} Thanks!`;
    case 2:
      return `Please, ${q.charAt(0).toLowerCase()}${q.slice(1)}`;
    default:
      return q.replace(/\ba\b/, 'the');
  }
}

const quantile = (sorted: number[], q: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * q))] as number;
const us = (ms: number) => `${(ms * 1000).toFixed(0)} µs`;

async function run(size: number): Promise<void> {
  const embedder = createBuiltinEmbedder();
  const index = new MemoryVectorIndex({ maxEntries: size + 1 });
  const partition = partitionKey('bench', 'openai', 'shape');
  const stored: { query: string; context: string }[] = [];
  const vectors: Float32Array[] = [];
  const seen = new Set<string>();
  const expiresAt = Date.now() + 3_600_000;
  const fillStart = performance.now();
  while (stored.length < size) {
    const query = pick(TEMPLATES)();
    const context = conversation();
    const key = `${query}\n${context}`;
    if (seen.has(key)) continue;
    seen.add(key);
    const v = await embedForCache(embedder, { query, context });
    const vector = entryVector(v.query, v.context);
    await index.upsert(partition, String(stored.length), vector, expiresAt);
    vectors.push(vector);
    stored.push({ query, context });
  }
  const fillMs = performance.now() - fillStart;
  const stats = await index.stats();

  const results: Record<'hit' | 'miss', { search: number[]; lookup: number[]; best: number[] }> = {
    hit: { search: [], lookup: [], best: [] },
    miss: { search: [], lookup: [], best: [] },
  };
  let reachable = 0;
  let found = 0;
  for (let i = 0; i < PROBES; i++) {
    const kind = i % 2 === 0 ? 'hit' : 'miss';
    const base = pick(stored);
    const parts =
      kind === 'hit'
        ? { query: paraphrase(base.query), context: base.context }
        : { query: pick(TEMPLATES)(), context: conversation() };
    const t0 = performance.now();
    const v = await embedForCache(embedder, parts);
    const probe = probeVector(v.query, v.context, ALPHA, BETA);
    const t1 = performance.now();
    const hits = await index.search(partition, probe, 1);
    const t2 = performance.now();
    results[kind].search.push(t2 - t1);
    results[kind].lookup.push(t2 - t0);
    // Recall against an exact scan: the best stored entry by DualScore.
    if (i < RECALL_PROBES) {
      let exact = -Infinity;
      for (const e of vectors) exact = Math.max(exact, dotOf(probe, e));
      if (exact >= TWEAK) {
        reachable++;
        if ((hits[0]?.score ?? -Infinity) >= exact - 1e-5) found++;
      }
    }
  }
  console.log(
    `\n${size.toLocaleString('en')} entries in one partition: filled in ${(fillMs / 1000).toFixed(1)} s ` +
      `(${us(fillMs / size)} per insert incl. embedding), index ${(stats.memoryBytes / 1048576).toFixed(0)} MiB`,
  );
  for (const kind of ['hit', 'miss'] as const) {
    const r = results[kind];
    r.search.sort((a, b) => a - b);
    r.lookup.sort((a, b) => a - b);
    console.log(
      `  ${kind === 'hit' ? 'near-duplicate' : 'new question  '}  search p50 ${us(quantile(r.search, 0.5))}  p99 ${us(quantile(r.search, 0.99))}` +
        `   lookup (embed + search) p50 ${us(quantile(r.lookup, 0.5))}  p99 ${us(quantile(r.lookup, 0.99))}`,
    );
  }
  console.log(
    `  recall: ${found}/${reachable} probes whose best exact DualScore was >= ${TWEAK} got that entry`,
  );
}

function dotOf(a: Float32Array, b: Float32Array): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += (a[i] as number) * (b[i] as number);
  return s;
}

const sizes = process.argv
  .slice(2)
  .map(Number)
  .filter((n) => n > 0);
for (const size of sizes.length > 0 ? sizes : [10_000, 100_000]) await run(size);
