/**
 * Maps a position in tsx-transpiled code back to the TypeScript source line. V8 profiles
 * name positions in the code tsx produced (minified onto a few lines), so a hot spot is only
 * useful once mapped. tsx keeps each transform, with its source map, in a cache folder.
 */
import { readdir, readFile, stat } from 'node:fs/promises';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';

const BASE64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';

/** Decodes one segment's base64 VLQ fields. */
export function decodeVlq(segment: string): number[] {
  const out: number[] = [];
  let value = 0;
  let shift = 0;
  for (const ch of segment) {
    const digit = BASE64.indexOf(ch);
    if (digit < 0) throw new Error(`bad VLQ character ${ch}`);
    value += (digit & 31) << shift;
    if (digit & 32) {
      shift += 5;
      continue;
    }
    out.push(value & 1 ? -(value >>> 1) : value >>> 1);
    value = 0;
    shift = 0;
  }
  return out;
}

/** [generated column, original line (0-based)] pairs per generated line, ascending by column. */
export type LineTable = Array<Array<[number, number]>>;

/** Parses a v3 `mappings` string for a single-source map. */
export function parseMappings(mappings: string): LineTable {
  const lines: LineTable = [];
  let srcLine = 0;
  for (const text of mappings.split(';')) {
    const row: Array<[number, number]> = [];
    let genCol = 0;
    for (const seg of text.split(',')) {
      if (seg === '') continue;
      const f = decodeVlq(seg);
      genCol += f[0] ?? 0;
      if (f.length >= 4) {
        srcLine += f[2] ?? 0;
        row.push([genCol, srcLine]);
      }
    }
    lines.push(row);
  }
  return lines;
}

/** The original 1-based line for a 0-based generated line and column, if mapped. */
export function originalLine(table: LineTable, line: number, column: number): number | undefined {
  const row = table[line];
  if (!row || row.length === 0) return undefined;
  let found: number | undefined;
  for (const [col, src] of row) {
    if (col > column) break;
    found = src;
  }
  return (found ?? row[0]![1]) + 1;
}

interface CacheEntry {
  code?: string;
  map?: { sources?: string[]; mappings?: string };
}

interface Transform {
  mtime: number;
  lines: string[];
  table: LineTable;
}

/** A V8 frame position: 0-based line and column in the generated code. */
export interface FramePosition {
  functionName: string;
  lineNumber: number;
  columnNumber: number;
}

/**
 * Maps frames of one source file to original lines. The cache may hold several transforms
 * of a file (edits, other tsx modes); the right one is the one whose code has the frame's
 * function name just before the frame's column.
 */
export class SourceLines {
  constructor(private readonly transforms: Map<string, Transform[]>) {}

  line(path: string, frame: FramePosition): number | undefined {
    const candidates = this.transforms.get(path) ?? [];
    const fits = (t: Transform): boolean => (t.lines[frame.lineNumber]?.length ?? 0) > frame.columnNumber;
    const named = (t: Transform): boolean =>
      frame.functionName !== '' &&
      t.lines[frame.lineNumber]!.slice(Math.max(0, frame.columnNumber - 80), frame.columnNumber).includes(
        frame.functionName,
      );
    const best = candidates.filter(fits).find(named) ?? candidates.find(fits);
    return best && originalLine(best.table, frame.lineNumber, frame.columnNumber);
  }
}

/** Every tsx transform in its cache folder, newest first per source file. */
export async function loadTsxMaps(dir = join(tmpdir(), `tsx-${userInfo().uid}`)): Promise<SourceLines> {
  const bySource = new Map<string, Transform[]>();
  const names = await readdir(dir).catch(() => [] as string[]);
  for (const name of names) {
    const file = join(dir, name);
    const info = await stat(file).catch(() => undefined);
    if (!info?.isFile()) continue;
    let entry: CacheEntry;
    try {
      entry = JSON.parse(await readFile(file, 'utf8')) as CacheEntry;
    } catch {
      continue;
    }
    const source = entry.map?.sources?.[0];
    const mappings = entry.map?.mappings;
    if (!source || mappings === undefined || entry.code === undefined) continue;
    const list = bySource.get(source) ?? [];
    list.push({ mtime: info.mtimeMs, lines: entry.code.split('\n'), table: parseMappings(mappings) });
    bySource.set(source, list);
  }
  for (const list of bySource.values()) list.sort((a, b) => b.mtime - a.mtime);
  return new SourceLines(bySource);
}
