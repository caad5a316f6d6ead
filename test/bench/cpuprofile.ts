/**
 * Summarises a V8 .cpuprofile (from BENCH_CPU_PROF=1): where the gateway's CPU time goes,
 * by package and by function, with repo functions mapped back to their TypeScript line.
 *
 *   npx tsx test/bench/cpuprofile.ts .bench/profiles/<file>.cpuprofile [--skip=<s>] [--top=<n>]
 *
 * --skip leaves out the first seconds (start-up and module loading); the bench prints when
 * its first measured window began.
 */
import { existsSync, readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { SourceMap, type SourceMapping } from 'node:module';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { loadTsxMaps, type SourceLines } from './sourcemap.ts';

export interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
  columnNumber: number;
}

export interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  hitCount?: number;
  children?: number[];
}

export interface Profile {
  nodes: ProfileNode[];
  /** Microseconds. */
  startTime: number;
  endTime: number;
  /** Node id of each sample, and the microseconds since the previous sample. */
  samples?: number[];
  timeDeltas?: number[];
}

/** Time (ms) attributed to each node, counting only samples at least `skipMs` after the start. */
export function timePerNode(profile: Profile, skipMs: number): Map<number, number> {
  const out = new Map<number, number>();
  const { samples, timeDeltas } = profile;
  if (!samples || !timeDeltas || samples.length !== timeDeltas.length) {
    const hits = profile.nodes.reduce((s, n) => s + (n.hitCount ?? 0), 0) || 1;
    const msPerHit = (profile.endTime - profile.startTime) / 1000 / hits;
    for (const n of profile.nodes) out.set(n.id, (n.hitCount ?? 0) * msPerHit);
    return out;
  }
  let at = 0;
  for (let i = 0; i < samples.length; i++) {
    at += timeDeltas[i]! / 1000;
    // A sample stands for the time until the next one.
    const span = (timeDeltas[i + 1] ?? 0) / 1000;
    if (at < skipMs) continue;
    out.set(samples[i]!, (out.get(samples[i]!) ?? 0) + span);
  }
  return out;
}

export interface Row {
  key: string;
  selfMs: number;
  totalMs: number;
}

/** Where a frame lives, for grouping: a package, node internals, the repo, or a V8 pseudo-frame. */
export function bucketOf(frame: CallFrame, repoRoot: string): string {
  const url = frame.url;
  // V8's pseudo-frames: (garbage collector), (idle), (program), (root).
  if (url === '') return frame.functionName;
  if (url.startsWith('node:')) return 'node internals';
  const path = url.startsWith('file://') ? fileURLToPath(url) : url;
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(path)?.[1];
  if (pkg) return pkg;
  if (path.startsWith(repoRoot)) return relative(repoRoot, path).split('/').slice(0, 3).join('/');
  return path;
}

/**
 * Whether a frame's file is one of the data plane's bundles, mapped through the map beside it.
 * Only those: packages ship .js files with maps too, and their frames are named by package.
 */
export function isDataplaneBundle(path: string, repoRoot: string): boolean {
  return /\.m?js$/.test(path) && path.startsWith(join(repoRoot, 'dataplane/dist') + sep);
}

/** The source map beside a bundle (`gantry.mjs.map`), read once; undefined when there is none. */
const bundleMaps = new Map<string, SourceMap | undefined>();
function bundleMap(path: string): SourceMap | undefined {
  if (!bundleMaps.has(path)) {
    const file = `${path}.map`;
    bundleMaps.set(
      path,
      existsSync(file)
        ? new SourceMap(JSON.parse(readFileSync(file, 'utf8')) as ConstructorParameters<typeof SourceMap>[0])
        : undefined,
    );
  }
  return bundleMaps.get(path);
}

function frameName(frame: CallFrame, repoRoot: string, maps: SourceLines): string {
  const fn = frame.functionName || '(anonymous)';
  if (frame.url === '') return fn;
  const path = frame.url.startsWith('file://') ? fileURLToPath(frame.url) : frame.url;
  // The bundle (dataplane/dist/gantry.mjs, whitespace-minified onto a few hundred lines) maps
  // through its own source map to the TypeScript file and line.
  const entry: Partial<SourceMapping> | undefined = isDataplaneBundle(path, repoRoot)
    ? bundleMap(path)?.findEntry(frame.lineNumber, frame.columnNumber)
    : undefined;
  if (entry?.originalSource !== undefined && entry.originalLine !== undefined)
    return `${fn} ${relative(repoRoot, resolve(dirname(path), entry.originalSource))}:${entry.originalLine + 1}`;
  const line = maps.line(path, frame);
  const where = path.startsWith(repoRoot) ? relative(repoRoot, path) : path.replace(/^.*node_modules\//, '');
  // Only tsx output is transformed; plain JS and node internals have their own lines.
  const unmapped = /\.[mc]?ts$/.test(path) ? ' (generated)' : '';
  return `${fn} ${where}:${line ?? `${frame.lineNumber + 1}${unmapped}`}`;
}

/** Self and inclusive time per key; a key counted once per stack even under recursion. */
export function aggregate(
  profile: Profile,
  time: Map<number, number>,
  keyOf: (n: ProfileNode) => string,
): Row[] {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const rows = new Map<string, Row>();
  const row = (key: string): Row => {
    let r = rows.get(key);
    if (!r) rows.set(key, (r = { key, selfMs: 0, totalMs: 0 }));
    return r;
  };
  const parentOf = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parentOf.set(c, n.id);
  for (const n of profile.nodes) {
    const ms = time.get(n.id) ?? 0;
    if (ms === 0) continue;
    row(keyOf(n)).selfMs += ms;
    const onStack = new Set<string>();
    for (let id: number | undefined = n.id; id !== undefined; id = parentOf.get(id)) {
      const key = keyOf(byId.get(id)!);
      if (onStack.has(key)) continue;
      onStack.add(key);
      row(key).totalMs += ms;
    }
  }
  return [...rows.values()];
}

const NOT_BUSY = new Set(['(idle)', '(root)']);

function print(title: string, rows: Row[], top: number, by: 'selfMs' | 'totalMs', busyMs: number): void {
  console.log(`\n${title}`);
  for (const r of [...rows]
    .sort((a, b) => b[by] - a[by])
    .filter((r) => !NOT_BUSY.has(r.key))
    .slice(0, top)) {
    const pct = (v: number): string => `${((v / busyMs) * 100).toFixed(1).padStart(5)}%`;
    console.log(`${pct(r.selfMs)} self ${pct(r.totalMs)} total  ${r.key}`);
  }
}

async function main(): Promise<void> {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: { skip: { type: 'string', default: '0' }, top: { type: 'string', default: '25' } },
  });
  const file = positionals[0];
  if (!file)
    throw new Error('usage: tsx test/bench/cpuprofile.ts <file.cpuprofile> [--skip=<s>] [--top=<n>]');
  const top = Number(values.top);
  const skipMs = Number(values.skip) * 1000;
  const repoRoot = fileURLToPath(new URL('../..', import.meta.url)).replace(/\/$/, '');
  const profile = JSON.parse(await readFile(file, 'utf8')) as Profile;
  const maps = await loadTsxMaps();
  const time = timePerNode(profile, skipMs);
  const wallMs = [...time.values()].reduce((a, b) => a + b, 0);
  const byBucket = aggregate(profile, time, (n) => bucketOf(n.callFrame, repoRoot));
  const idleMs = byBucket.find((r) => r.key === '(idle)')?.selfMs ?? 0;
  const busyMs = wallMs - idleMs;
  console.log(
    `profile ${file}: ${(wallMs / 1000).toFixed(1)} s wall after skipping ${skipMs / 1000} s, ${(busyMs / 1000).toFixed(1)} s busy; percentages are of busy time`,
  );
  print('By package / area (self time)', byBucket, top, 'selfMs', busyMs);
  const byFunction = aggregate(profile, time, (n) => frameName(n.callFrame, repoRoot, maps));
  print('Functions by self time', byFunction, top, 'selfMs', busyMs);
  const repoFns = byFunction.filter((r) => / (dataplane|crds)\//.test(r.key));
  print('Repo functions by inclusive time', repoFns, top, 'totalMs', busyMs);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  main().catch((err: unknown) => {
    console.error((err as Error).message);
    process.exit(1);
  });
}
