import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseCsv } from '../../scripts/routing-data.ts';
import { loadOutcomes } from './routing-outcomes.ts';

interface Manifest {
  sources: { repo: string; commit: string; licence: string; files: string[] }[];
  rows: { train: number; mmluDev: number; vicunaDev: number; mmluTest: number; mtBench: number };
  evalOnly: {
    file: string;
    commit: string;
    licence: string;
    contentLicences: Record<string, string>;
    rows: number;
    weakFails: number;
  }[];
  unseen: { repo: string; commit: string; licence: string; rows: number; weakFails: number };
  freshUnseen: {
    file: string;
    commit: string;
    licence: string;
    files: string[];
    contentLicences: Record<string, string>;
    rows: number;
    weakFails: number;
  }[];
  heldOutSubjects: string[];
  devSubjects: string[];
}
const manifest = JSON.parse(
  readFileSync(new URL('../data/routing/outcomes/MANIFEST.json', import.meta.url), 'utf8'),
) as Manifest;
const norm = (t: string): string => t.toLowerCase().replace(/\s+/g, ' ').trim();
/** Unseen domains added after arena-bench.jsonl (scripts/build-routing-fresh.ts). */
const FRESH = ['commonsenseqa.jsonl', 'challenge300.jsonl'];
const UNSEEN_FILES = ['arena-bench.jsonl', 'draw.jsonl', 'code.jsonl', ...FRESH];

describe('routing outcome data', () => {
  it('matches its manifest, with every source pinned to a commit and a licence', () => {
    expect(loadOutcomes('mmlu-dev.jsonl')).toHaveLength(manifest.rows.mmluDev);
    expect(loadOutcomes('vicuna-dev.jsonl')).toHaveLength(manifest.rows.vicunaDev);
    expect(manifest.evalOnly.map((e) => e.file)).toEqual(['draw.jsonl', 'code.jsonl']);
    for (const e of manifest.evalOnly) {
      const rows = loadOutcomes(e.file);
      expect(rows).toHaveLength(e.rows);
      expect(rows.filter((r) => r.weakFails)).toHaveLength(e.weakFails);
      expect(e.commit).toMatch(/^[0-9a-f]{40}$/);
      expect(['MIT', 'CC0-1.0']).toContain(e.licence);
      // The repository's licence covers its files; the prompts inside keep their datasets' own.
      expect(Object.keys(e.contentLicences).length).toBeGreaterThan(0);
    }
    const unseen = loadOutcomes('arena-bench.jsonl');
    expect(unseen).toHaveLength(manifest.unseen.rows);
    expect(unseen.filter((r) => r.weakFails)).toHaveLength(manifest.unseen.weakFails);
    expect(manifest.unseen.commit).toMatch(/^[0-9a-f]{40}$/);
    expect(loadOutcomes('mmlu-heldout.jsonl')).toHaveLength(manifest.rows.mmluTest);
    expect(loadOutcomes('mt-bench.jsonl')).toHaveLength(manifest.rows.mtBench);
    for (const s of manifest.sources) {
      expect(s.commit).toMatch(/^[0-9a-f]{40}$/);
      expect(s.licence).toBe('Apache-2.0');
      // RouteLLM's GSM8K responses are reserved for independent evaluation.
      expect(s.files.some((f) => /gsm8k/i.test(f))).toBe(false);
    }
  });

  it('keeps the test splits apart from everything a choice was made on', () => {
    const seen = new Set(
      [...loadOutcomes('mmlu-dev.jsonl'), ...loadOutcomes('vicuna-dev.jsonl')].map((r) => norm(r.text)),
    );
    for (const file of [
      'mt-bench.jsonl',
      'mmlu-heldout.jsonl',
      'arena-bench.jsonl',
      'draw.jsonl',
      'code.jsonl',
    ])
      expect(loadOutcomes(file).filter((r) => seen.has(norm(r.text)))).toEqual([]);
    const test = new Set(manifest.heldOutSubjects);
    expect(manifest.devSubjects.filter((s) => test.has(s))).toEqual([]);
    expect(new Set(loadOutcomes('mmlu-heldout.jsonl').map((r) => r.group))).toEqual(test);
  });
  it('keeps the unseen domains out of everything that trains, tunes or picks a threshold', () => {
    // Only the scripts that write the files, the list of splits and the evaluation that scores
    // them may name them; any other script (a new trainer too) must not read them.
    const allowed = new Set([
      'scripts/build-routing-unseen.ts',
      'scripts/build-routing-domains.ts',
      'scripts/build-routing-fresh.ts',
      'test/eval/routing-outcomes.ts',
      'test/eval/routing-auc.ts',
      // The one-shot scorer of the frozen per-tenant learner: it chooses nothing, and its
      // learner and tuner (routing-tenant-learner.ts, routing-tenant-tune.ts) stay checked.
      'test/eval/routing-tenant-unseen.ts',
      'test/eval/routing-data.test.ts',
    ]);
    const root = new URL('../../', import.meta.url);
    const sources = ['scripts', 'scripts/guards', 'test/eval', 'dataplane/src/pipeline/routing']
      .flatMap((dir) =>
        readdirSync(new URL(dir, root), { withFileTypes: true })
          .filter((e) => e.isFile())
          .map((e) => `${dir}/${e.name}`),
      )
      .filter((f) => !allowed.has(f));
    expect(sources).toContain('scripts/train-routing.ts');
    expect(sources).toContain('test/eval/routing-thresholds.ts');
    expect(sources).toContain('test/eval/routing-tenant-tune.ts');
    expect(sources).toContain('test/eval/routing-tenant-learner.ts');
    expect(sources).toContain('test/eval/routing-tenant-sim.ts');
    expect(sources).toContain('scripts/train-routing-items.ts');
    expect(sources).toContain('scripts/routing-seen-domains.ts');
    expect(sources).toContain('test/eval/routing-item-features.ts');
    const readsOf = (files: string[]): RegExp =>
      new RegExp(`['"\`/](${files.map((f) => f.replace('.', '\\.')).join('|')})`);
    // The model's regression test holds floors on DRAW-1K and code, set after they were scored;
    // no test may score the fresh domains before `npm run eval` first does.
    const scoredBefore = new Set(['dataplane/src/pipeline/routing/outcome.test.ts']);
    for (const file of sources) {
      const source = readFileSync(new URL(file, root), 'utf8');
      // A quoted file name is a read; a doc comment may name a file, not load it.
      expect(source, file).not.toMatch(readsOf(scoredBefore.has(file) ? FRESH : UNSEEN_FILES));
      // The list of splits names every unseen file, and so does the directory: iterating either
      // would read them all.
      expect(source, file).not.toMatch(/OUTCOME_SPLITS|readdirSync\([^)]*outcomes/);
    }
  });

  it('records the fresh unseen domains, big enough and with both outcomes common', () => {
    expect(manifest.freshUnseen.map((e) => e.file)).toEqual(FRESH);
    for (const e of manifest.freshUnseen) {
      const rows = loadOutcomes(e.file);
      expect(rows).toHaveLength(e.rows);
      expect(rows.filter((r) => r.weakFails)).toHaveLength(e.weakFails);
      expect(rows.length).toBeGreaterThanOrEqual(250);
      // Each label on at least 15 % of rows, so an AUC on the set means something.
      expect(e.weakFails / e.rows).toBeGreaterThanOrEqual(0.15);
      expect(e.weakFails / e.rows).toBeLessThanOrEqual(0.85);
      expect(new Set(rows.map((r) => norm(r.text))).size).toBe(rows.length);
      expect(e.commit).toMatch(/^[0-9a-f]{40}$/);
      expect(e.licence).toBe('Apache-2.0');
      expect(Object.keys(e.contentLicences).length).toBeGreaterThan(0);
      expect(e.files.some((f) => /gsm/i.test(f))).toBe(false);
    }
  });

  it('shares no prompt between a fresh unseen domain and any other routing data', () => {
    const other = new Set<string>();
    for (const file of [
      'mmlu-dev.jsonl',
      'mmlu-heldout.jsonl',
      'vicuna-dev.jsonl',
      'mt-bench.jsonl',
      'arena-bench.jsonl',
      'draw.jsonl',
      'code.jsonl',
      'wide/bbh.jsonl',
      'wide/svamp.jsonl',
      'wide/apps.jsonl',
    ])
      for (const r of loadOutcomes(file)) other.add(norm(r.text));
    for (const file of ['labelled.jsonl', 'holdout.jsonl'])
      for (const l of readFileSync(new URL(`../data/routing/${file}`, import.meta.url), 'utf8')
        .split('\n')
        .filter(Boolean))
        for (const m of (JSON.parse(l) as { messages: { content: unknown }[] }).messages)
          if (typeof m.content === 'string') other.add(norm(m.content));
    const [a, b] = FRESH.map((f) => loadOutcomes(f).map((r) => norm(r.text)));
    expect((a ?? []).filter((t) => other.has(t))).toEqual([]);
    expect((b ?? []).filter((t) => other.has(t))).toEqual([]);
    expect((a ?? []).filter((t) => new Set(b).has(t))).toEqual([]);
  });
});

describe('wide training domains (scripts/build-routing-wide.ts)', () => {
  interface WideManifest {
    domains: {
      file: string;
      repo: string;
      commit: string;
      licence: string;
      files: string[];
      contentLicences: Record<string, string>;
      rows: number;
      weakFails: number;
    }[];
  }
  const wide = JSON.parse(
    readFileSync(new URL('../data/routing/outcomes/wide/MANIFEST.json', import.meta.url), 'utf8'),
  ) as WideManifest;
  const wideRows = (file: string): { text: string; weakFails: boolean }[] => loadOutcomes(`wide/${file}`);

  it('match their manifest, each pinned to a commit with the licences of repository and problems', () => {
    expect(wide.domains.map((d) => d.file)).toEqual([
      'bbh.jsonl',
      'svamp.jsonl',
      'apps.jsonl',
      'draw-train.jsonl',
      'code-train.jsonl',
    ]);
    for (const d of wide.domains) {
      const rows = wideRows(d.file);
      expect(rows).toHaveLength(d.rows);
      expect(rows.filter((r) => r.weakFails)).toHaveLength(d.weakFails);
      expect(new Set(rows.map((r) => norm(r.text))).size).toBe(rows.length);
      expect(d.commit).toMatch(/^[0-9a-f]{40}$/);
      expect(['MIT', 'Apache-2.0', 'CC0-1.0']).toContain(d.licence);
      expect(Object.keys(d.contentLicences).length).toBeGreaterThan(0);
      // Never GSM8K, never the reserved CommonsenseQA results of the same repository.
      expect(d.files.some((f) => /gsm|commonsense/i.test(f))).toBe(false);
    }
  });

  it('leave out every test-split prompt and keep DRAW-1K and code to their training quarters', () => {
    const testSplits = new Set(
      loadOutcomes('mmlu-heldout.jsonl')
        .concat(loadOutcomes('mt-bench.jsonl'))
        .map((r) => norm(r.text)),
    );
    for (const d of wide.domains)
      expect(wideRows(d.file).filter((r) => testSplits.has(norm(r.text)))).toEqual([]);
    // Three quarters each: 747 of DRAW-1K's 1,000 (three repeats), 421 of code's 561.
    expect(wideRows('draw-train.jsonl').length).toBeLessThanOrEqual(750);
    expect(wideRows('code-train.jsonl').length).toBeLessThanOrEqual(Math.ceil((561 * 3) / 4));
  });
});

describe('parseCsv', () => {
  it('reads quoted fields with commas, doubled quotes and newlines', () => {
    expect(parseCsv('prompt,a,b\n"Q, with ""quote""\nA. x",True,False\r\nplain,1,2')).toEqual([
      ['prompt', 'a', 'b'],
      ['Q, with "quote"\nA. x', 'True', 'False'],
      ['plain', '1', '2'],
    ]);
  });
});

describe('cascade evidence files (scripts/build-routing-cascade.ts)', () => {
  interface CascadeManifest {
    commit: string;
    licence: string;
    domains: { file: string; rows: number; weakFails: number; strongFails: number; files: string[] }[];
  }
  interface CascadeRow {
    text: string;
    weakFails: boolean;
    strongFails: boolean;
    tokenUnsure: number;
    statedUnsure: number;
    haikuStatedUnsure: number;
  }
  const cascade = JSON.parse(
    readFileSync(new URL('../data/routing/outcomes/cascade/MANIFEST.json', import.meta.url), 'utf8'),
  ) as CascadeManifest;
  const rowsOf = (file: string): CascadeRow[] => loadOutcomes(`cascade/${file}`) as unknown as CascadeRow[];

  it('match their manifest, pinned to a commit, with signals in [0, 1]', () => {
    expect(cascade.domains.map((d) => d.file)).toEqual([
      'sciq.jsonl',
      'lsat-ar.jsonl',
      'sat-en.jsonl',
      'boolq.jsonl',
    ]);
    expect(cascade.commit).toMatch(/^[0-9a-f]{40}$/);
    expect(cascade.licence).toBe('MIT');
    for (const d of cascade.domains) {
      const rows = rowsOf(d.file);
      expect(rows).toHaveLength(d.rows);
      expect(rows.filter((r) => r.weakFails)).toHaveLength(d.weakFails);
      expect(rows.filter((r) => r.strongFails)).toHaveLength(d.strongFails);
      // Both outcomes common enough for an AUC to mean something.
      expect(d.weakFails).toBeGreaterThanOrEqual(40);
      expect(d.rows - d.weakFails).toBeGreaterThanOrEqual(40);
      for (const r of rows)
        for (const s of [r.tokenUnsure, r.statedUnsure, r.haikuStatedUnsure]) {
          expect(s).toBeGreaterThanOrEqual(0);
          expect(s).toBeLessThanOrEqual(1);
        }
      expect(d.files.some((f) => /gsm|commonsense/i.test(f))).toBe(false);
    }
  });

  it('share no prompt with any other routing data, unseen files included', () => {
    const other = new Set<string>();
    for (const file of [
      'mmlu-dev.jsonl',
      'mmlu-heldout.jsonl',
      'vicuna-dev.jsonl',
      'mt-bench.jsonl',
      'wide/bbh.jsonl',
      'wide/svamp.jsonl',
      'wide/apps.jsonl',
      ...UNSEEN_FILES,
    ])
      for (const r of loadOutcomes(file)) other.add(norm(r.text));
    for (const d of cascade.domains)
      expect(rowsOf(d.file).filter((r) => other.has(norm(r.text)))).toEqual([]);
  });
});
