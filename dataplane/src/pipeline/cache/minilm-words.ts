/**
 * all-MiniLM-L6-v2's int8 word table and vocabulary (models/minilm, made by
 * scripts/build-minilm.py), read once per process and shared: the minilm embedder feeds the
 * rows to its encoder, an evaluation feature averages them (test/eval/routing-static-embedding.ts), and one
 * copy (~12 MB) serves both.
 */
import { readFileSync } from 'node:fs';
import { parseVocab, type WordPieceVocab } from './wordpiece.ts';

export interface WordTable {
  dims: number;
  /** One dequantisation scale per row. */
  scales: Float32Array;
  rows: Int8Array;
}

export interface MinilmWords {
  vocab: WordPieceVocab;
  words: WordTable;
}

function readWordTable(path: string): WordTable {
  const buf = readFileSync(path);
  const rowsCount = buf.readUInt32LE(0);
  const dims = buf.readUInt32LE(4);
  const scalesAt = 8;
  const rowsAt = scalesAt + rowsCount * 4;
  if (buf.length !== rowsAt + rowsCount * dims) throw new Error(`${path}: size does not match its header`);
  // Copies: the Buffer may sit at an offset that Float32Array cannot view.
  const scales = new Float32Array(rowsCount);
  for (let i = 0; i < rowsCount; i++) scales[i] = buf.readFloatLE(scalesAt + i * 4);
  const rows = new Int8Array(buf.buffer.slice(buf.byteOffset + rowsAt, buf.byteOffset + buf.length));
  return { dims, scales, rows };
}

const loaded = new Map<string, MinilmWords>();

/** The table and vocabulary of `dir`, read on the first call and kept. */
export function minilmWords(dir: string): MinilmWords {
  let m = loaded.get(dir);
  if (!m) {
    m = {
      words: readWordTable(`${dir}/words.int8.bin`),
      vocab: parseVocab(readFileSync(`${dir}/vocab.txt`, 'utf8')),
    };
    loaded.set(dir, m);
  }
  return m;
}
