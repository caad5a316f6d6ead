/** Small helpers shared by the routing build and training scripts (kept apart so each stays readable). */
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';

/** A file at a commit of a fetched repository (a bare git directory under /work/.mirror). */
export const gitShow = (dir: string, commit: string, path: string): string =>
  execFileSync('git', ['--git-dir', dir, 'show', `${commit}:${path}`], {
    encoding: 'utf8',
    maxBuffer: 1 << 28,
  });

/** One row of an outcome file, as the build scripts write it. */
export interface OutcomeOut {
  group: string;
  weakFails: boolean;
  text: string;
}

/** A prompt as compared across files: lower case, spaces collapsed. */
export const normPrompt = (t: string): string => t.toLowerCase().replace(/\s+/g, ' ').trim();

/** Writes `rows` as jsonl into `dir`, less those whose prompt is in `seen`; what it wrote, for the manifest. */
export function writeOutcomes(
  dir: URL,
  file: string,
  rows: OutcomeOut[],
  seen: ReadonlySet<string>,
): { rows: number; weakFails: number; droppedAsOverlap: number } {
  const kept = rows.filter((r) => !seen.has(normPrompt(r.text)));
  writeFileSync(new URL(file, dir), kept.map((r) => JSON.stringify(r)).join('\n') + '\n');
  return {
    rows: kept.length,
    weakFails: kept.filter((r) => r.weakFails).length,
    droppedAsOverlap: rows.length - kept.length,
  };
}

/** RFC 4180 rows (quoted fields may hold newlines and doubled quotes). */
export function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i] as string;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') {
      row.push(field);
      field = '';
    } else if (c === '\n') {
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
    } else if (c !== '\r') field += c;
  }
  if (field || row.length) {
    row.push(field);
    rows.push(row);
  }
  return rows;
}
