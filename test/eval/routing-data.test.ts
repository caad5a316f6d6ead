import { readFileSync } from 'node:fs';
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
  heldOutSubjects: string[];
  devSubjects: string[];
}
const manifest = JSON.parse(
  readFileSync(new URL('../data/routing/outcomes/MANIFEST.json', import.meta.url), 'utf8'),
) as Manifest;
const norm = (t: string): string => t.toLowerCase().replace(/\s+/g, ' ').trim();

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
    // A quoted file name is a read; a doc comment may name a file, not load it.
    for (const file of ['../../scripts/train-routing.ts', './routing-thresholds.ts'])
      expect(readFileSync(new URL(file, import.meta.url), 'utf8')).not.toMatch(
        /['"`](arena-bench|draw|code)\.jsonl/,
      );
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
