/**
 * The guardrail evaluation sets, by split. "dev" is what building the guards looked at
 * (the learned layer's calibration split, the secrets samples the per-rule test uses, the
 * PII cases generated with the dev seed and the hand-written corpus); "test" was never
 * looked at while building them (held-out sentence frames and public rows, the second
 * secrets sample per rule, other countries' phone plans, the two held-out files).
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseSplit, type SplitCase } from '../../dataplane/src/pipeline/guardrails/learned/evaluate.ts';
import type { EntityRow } from '../../dataplane/src/pipeline/guardrails/learned/entities.ts';

export const DATA = join(dirname(fileURLToPath(import.meta.url)), '..', 'data', 'guardrails');
export type Split = 'dev' | 'test';

const rows = (path: string): EntityRow[] =>
  readFileSync(join(DATA, path), 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as EntityRow);

export function learnedSplit(split: Split): SplitCase[] {
  return parseSplit(readFileSync(join(DATA, 'learned', `${split}.jsonl`), 'utf8'));
}

export function secretsSplit(split: Split): EntityRow[] {
  return split === 'dev'
    ? [...rows('secrets/samples.jsonl'), ...rows('secrets/benign-dev.jsonl')]
    : [...rows('secrets/test.jsonl'), ...rows('secrets/benign-test.jsonl')];
}

/** Hand-written corpus rows that carry a PII label or none at all (benign look-alikes). */
function corpusPii(file: string): EntityRow[] {
  return rows(file).filter((r) => r.labels.length === 0 || r.labels.some((l) => l.guardrail === 'pii'));
}

export function piiSplit(split: Split): EntityRow[] {
  return split === 'dev'
    ? [...rows('pii/dev.jsonl'), ...corpusPii('corpus.jsonl')]
    : [...rows('pii/test.jsonl'), ...corpusPii('holdout.jsonl')];
}
