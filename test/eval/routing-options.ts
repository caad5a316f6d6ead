/**
 * The answer options a prompt carries, if any, and the stem before them. Formats read (fixed
 * before any outcome file was looked at for them, test/data/routing/outcomes/UNSEEN.md):
 * lines "A. x", "A) x", "(A) x", "A: x" with letters running on from A; "- x" lines after an
 * "Options:" line; inline "(A) x (B) y". Fewer than two options means none.
 */
export interface ParsedOptions {
  stem: string;
  options: string[];
}

const LINE_OPTION = /^\s*(?:\(([A-Z])\)|([A-Z])[.):])\s*(.*)$/;
const HEADER = /(?:options|answer choices|choices)\s*:?\s*$/i;
const INLINE_MARK = /\(([A-Z])\)/g;

const code = (letter: string): number => letter.charCodeAt(0) - 65;
const stemBefore = (text: string): string => text.replace(HEADER, '').trim();

/** The last run of option lines lettered A, B, C… in order. */
function lineOptions(lines: string[]): ParsedOptions | undefined {
  let found: { start: number; options: string[] } | undefined;
  let run: { start: number; options: string[] } | undefined;
  lines.forEach((line, i) => {
    const m = LINE_OPTION.exec(line);
    const letter = m ? (m[1] ?? m[2]) : undefined;
    if (m && letter !== undefined && run && code(letter) === run.options.length) {
      run.options.push((m[3] ?? '').trim());
      return;
    }
    if (run && run.options.length >= 2) found = run;
    run = m && letter === 'A' ? { start: i, options: [(m[3] ?? '').trim()] } : undefined;
  });
  if (run && (run as { options: string[] }).options.length >= 2) found = run;
  if (!found) return undefined;
  return { stem: stemBefore(lines.slice(0, found.start).join('\n')), options: found.options };
}

/** "- x" lines right after an "Options:" line. */
function dashOptions(lines: string[]): ParsedOptions | undefined {
  const at = lines.findIndex((l) => /^\s*(?:options|answer choices|choices)\s*:\s*$/i.test(l));
  if (at < 0) return undefined;
  const options: string[] = [];
  for (const l of lines.slice(at + 1)) {
    const m = /^\s*[-*]\s+(.*)$/.exec(l);
    if (!m) break;
    options.push((m[1] ?? '').trim());
  }
  return options.length >= 2 ? { stem: lines.slice(0, at).join('\n').trim(), options } : undefined;
}

/** "(A) x (B) y …" inside one line or paragraph. */
function inlineOptions(text: string): ParsedOptions | undefined {
  const marks = [...text.matchAll(INLINE_MARK)];
  const first = marks.findIndex((m) => m[1] === 'A');
  if (first < 0) return undefined;
  const run = [marks[first] as RegExpExecArray];
  for (const m of marks.slice(first + 1)) if (code(m[1] as string) === run.length) run.push(m);
  if (run.length < 2) return undefined;
  const options = run.map((m, i) => {
    const from = (m.index ?? 0) + m[0].length;
    const next = run[i + 1];
    // The last option ends with its line: what follows is an instruction, not an option.
    return (next ? text.slice(from, next.index) : (text.slice(from).split('\n')[0] ?? '')).trim();
  });
  return { stem: stemBefore(text.slice(0, run[0]?.index ?? 0)), options };
}

export function parseOptions(text: string): ParsedOptions {
  const lines = text.split('\n');
  return lineOptions(lines) ?? dashOptions(lines) ?? inlineOptions(text) ?? { stem: text, options: [] };
}
