import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseCsv } from '../../scripts/routing-data.ts';
import { loadOutcomes } from './routing-outcomes.ts';

interface Manifest {
  sources: { repo: string; commit: string; licence: string; files: string[] }[];
  rows: {
    train: number;
    mmluDev: number;
    vicunaDev: number;
    drawDev: number;
    codeDev: number;
    mmluTest: number;
    mtBench: number;
  };
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
    expect(loadOutcomes('draw-dev.jsonl')).toHaveLength(manifest.rows.drawDev);
    expect(loadOutcomes('code-dev.jsonl')).toHaveLength(manifest.rows.codeDev);
    const unseen = loadOutcomes('arena-bench.jsonl');
    expect(unseen).toHaveLength(manifest.unseen.rows);
    expect(unseen.filter((r) => r.weakFails)).toHaveLength(manifest.unseen.weakFails);
    expect(manifest.unseen.commit).toMatch(/^[0-9a-f]{40}$/);
    expect(loadOutcomes('mmlu-heldout.jsonl')).toHaveLength(manifest.rows.mmluTest);
    expect(loadOutcomes('mt-bench.jsonl')).toHaveLength(manifest.rows.mtBench);
    for (const s of manifest.sources) {
      expect(s.commit).toMatch(/^[0-9a-f]{40}$/);
      expect(['Apache-2.0', 'MIT', 'CC0-1.0']).toContain(s.licence);
      // RouteLLM's GSM8K responses are reserved for independent evaluation.
      expect(s.files.some((f) => /gsm8k/i.test(f))).toBe(false);
    }
  });

  it('keeps the test splits apart from everything a choice was made on', () => {
    const seen = new Set(
      ['mmlu-dev.jsonl', 'vicuna-dev.jsonl', 'draw-dev.jsonl', 'code-dev.jsonl']
        .flatMap(loadOutcomes)
        .map((r) => norm(r.text)),
    );
    for (const file of ['mt-bench.jsonl', 'mmlu-heldout.jsonl', 'arena-bench.jsonl'])
      expect(loadOutcomes(file).filter((r) => seen.has(norm(r.text)))).toEqual([]);
    const test = new Set(manifest.heldOutSubjects);
    expect(manifest.devSubjects.filter((s) => test.has(s))).toEqual([]);
    expect(new Set(loadOutcomes('mmlu-heldout.jsonl').map((r) => r.group))).toEqual(test);
  });
  it('keeps the unseen domain out of everything that trains, tunes or picks a threshold', () => {
    // A quoted file name is a read; the trainer's doc comment may name the file, not load it.
    for (const file of ['../../scripts/train-routing.ts', './routing-thresholds.ts'])
      expect(readFileSync(new URL(file, import.meta.url), 'utf8')).not.toMatch(/['"`]arena-bench\.jsonl/);
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
