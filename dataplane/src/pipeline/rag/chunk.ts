/**
 * Splits a document into overlapping chunks for retrieval. A chunk ends at the last
 * paragraph break, else line break, else sentence end, else space inside its window, so
 * chunks keep whole thoughts where the text allows; only a run without any break is cut
 * mid-word. Each chunk after the first starts `overlap` characters before the previous
 * one ended (moved forward to a word start), so a fact split by a boundary is whole in
 * one of the two. Pure.
 */
import { invalidParam } from '../../errors.ts';

export interface ChunkOptions {
  /** Longest chunk, in characters. */
  maxChars: number;
  /** Characters each chunk repeats from the end of the one before. */
  overlap: number;
}

export interface Chunk {
  index: number;
  text: string;
  /** Offsets of the chunk in the (normalised) document. */
  start: number;
  end: number;
}

export const DEFAULT_CHUNKING: ChunkOptions = { maxChars: 1000, overlap: 200 };
export const MIN_CHUNK_CHARS = 100;
export const MAX_CHUNK_CHARS = 8000;
/** Chunks one ingest may make: each is embedded, so this bounds one call's cost and time. */
export const MAX_CHUNKS_PER_DOCUMENT = 4096;

export function chunkOptions(maxChars: unknown, overlap: unknown): ChunkOptions {
  const size = maxChars === undefined ? DEFAULT_CHUNKING.maxChars : Number(maxChars);
  if (!Number.isInteger(size) || size < MIN_CHUNK_CHARS || size > MAX_CHUNK_CHARS)
    throw invalidParam(
      'chunk_size',
      `must be a whole number of characters from ${MIN_CHUNK_CHARS} to ${MAX_CHUNK_CHARS}`,
    );
  const over =
    overlap === undefined ? Math.min(DEFAULT_CHUNKING.overlap, Math.floor(size / 4)) : Number(overlap);
  if (!Number.isInteger(over) || over < 0 || over > size / 2)
    throw invalidParam(
      'chunk_overlap',
      `must be a whole number from 0 to half of chunk_size (${Math.floor(size / 2)})`,
    );
  return { maxChars: size, overlap: over };
}

/** Line endings unified and runs of blank lines folded, so offsets and breaks are stable. */
export const normaliseText = (text: string): string =>
  text
    .replace(/\r\n?/g, '\n')
    .replace(/[ \t]+\n/g, '\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();

const BREAKS: RegExp[] = [/\n\n/g, /\n/g, /[.!?。](?=\s)/g, /\s/g];

/** Where a chunk starting at `start` should end: the best break in its second half, else the window's end. */
function endOf(text: string, start: number, maxChars: number): number {
  const limit = Math.min(text.length, start + maxChars);
  if (limit === text.length) return limit;
  const window = text.slice(start, limit);
  for (const re of BREAKS) {
    let best = -1;
    for (const m of window.matchAll(re)) best = m.index + m[0].length;
    // A break in the first half would make a short chunk; try a weaker kind of break instead.
    if (best > maxChars / 2) return start + best;
  }
  return limit;
}

/** The next chunk's start: `overlap` back from `end`, moved forward to a word start. */
function nextStart(text: string, start: number, end: number, overlap: number): number {
  if (overlap === 0) return end;
  let s = Math.max(start + 1, end - overlap);
  while (s < end && !/\s/.test(text[s - 1]!)) s++;
  return s;
}

export function chunkText(raw: string, opts: ChunkOptions = DEFAULT_CHUNKING): Chunk[] {
  const text = normaliseText(raw);
  const chunks: Chunk[] = [];
  let start = 0;
  while (start < text.length) {
    const end = endOf(text, start, opts.maxChars);
    const piece = text.slice(start, end).trim();
    if (piece !== '') chunks.push({ index: chunks.length, text: piece, start, end });
    if (chunks.length > MAX_CHUNKS_PER_DOCUMENT)
      throw invalidParam(
        'file',
        `the document makes more than ${MAX_CHUNKS_PER_DOCUMENT} chunks of ${opts.maxChars} characters; split it or raise chunk_size`,
      );
    if (end >= text.length) break;
    start = nextStart(text, start, end, opts.overlap);
  }
  return chunks;
}
