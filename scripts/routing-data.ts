/** Small parsers shared by the routing training script (kept apart so the trainer stays readable). */

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

/** A committed outcome file's rows (test/data/routing/outcomes/<name>). */
export interface OutcomeFileRow {
  group: string;
  weakFails: boolean;
  text: string;
}

/**
 * The three quarters of an outcome domain that training may read: every row but each group's
 * 4th, 8th, … (index within its group % 4 === 3; for DRAW-1K that is question_No % 4 === 3,
 * the split of the earlier retrain). The quarter left out is kept for the evaluation.
 */
export function trainingQuarters<T extends { group: string }>(rows: readonly T[]): T[] {
  const seen = new Map<string, number>();
  return rows.filter((r) => {
    const i = seen.get(r.group) ?? 0;
    seen.set(r.group, i + 1);
    return i % 4 !== 3;
  });
}

const normalised = (t: string): string => t.toLowerCase().replace(/\s+/g, ' ').trim();

/**
 * The complement of trainingQuarters, less any row whose text also sits in the training
 * quarters (DRAW-1K repeats three problems): what the evaluation reports as the kept quarter.
 */
export function keptQuarter<T extends { group: string; text: string }>(rows: readonly T[]): T[] {
  const train = new Set(trainingQuarters(rows));
  const trainTexts = new Set([...train].map((r) => normalised(r.text)));
  return rows.filter((r) => !train.has(r) && !trainTexts.has(normalised(r.text)));
}
