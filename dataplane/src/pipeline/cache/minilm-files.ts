/**
 * The start-up check of the minilm embedder's files (models/minilm): each file SOURCE.json
 * lists is there at its recorded size, and the word table's header agrees with its size, its
 * 384 dimensions and the vocabulary. Cheap (a few stats and 240 KB read, no onnxruntime), so
 * a gateway that will embed with minilm learns of a missing or truncated file before it
 * listens, while the 12 MB table and the encoder still load on first use.
 */
import { closeSync, openSync, readFileSync, readSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { AssetError } from '../../assets.ts';

const DIMENSIONS = 384;
const REQUIRED = ['encoder.int8.onnx', 'words.int8.bin', 'vocab.txt'] as const;

const FIX =
  'The minilm cache embedder needs models/minilm two levels above the bundle (the image copies it ' +
  'to /app/models); set GANTRY_MINILM_DIR to a folder with its files, or give the tenants a ' +
  'CachePolicy with embeddingModel: builtin';

/**
 * Runs one file operation, turning any failure into an AssetError naming the file: a file that
 * passes its size check but cannot be read (EACCES on a volume owned by another uid, EISDIR)
 * must reach the callers as the same error as a missing one, never as a plain one.
 */
function onFile<T>(path: string, op: () => T): T {
  try {
    return op();
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new AssetError(path, code === 'ENOENT' ? 'missing' : `unreadable (${code ?? String(err)})`, FIX);
  }
}

/** SOURCE.json's `files`: name → size in bytes, checked for shape here at the boundary. */
function recordedSizes(dir: string): Map<string, number> {
  const path = join(dir, 'SOURCE.json');
  const text = onFile(path, () => readFileSync(path, 'utf8'));
  let files: unknown;
  try {
    files = (JSON.parse(text) as { files?: unknown }).files;
  } catch (err) {
    throw new AssetError(path, `corrupt (${(err as Error).message})`, FIX);
  }
  const sizes = new Map<string, number>();
  if (files && typeof files === 'object')
    for (const [name, size] of Object.entries(files))
      if (Number.isInteger(size)) sizes.set(name, size as number);
  for (const name of REQUIRED)
    if (!sizes.has(name)) throw new AssetError(path, `corrupt (no size recorded for ${name})`, FIX);
  return sizes;
}

/**
 * A checkout with Windows' core.autocrlf turns vocab.txt's line ends into CRLF (the repository's
 * .gitattributes now forbids it): say so, read only on this failure path.
 */
function crlfHint(path: string): string {
  if (!path.endsWith('.txt')) return '';
  try {
    return readFileSync(path).includes('\r\n')
      ? "; its lines end in CRLF: check it out again with the repository's .gitattributes (no autocrlf)"
      : '';
  } catch {
    return '';
  }
}

function readHead(path: string, bytes: number): Buffer {
  const fd = openSync(path, 'r');
  try {
    const buf = Buffer.alloc(bytes);
    readSync(fd, buf, 0, bytes, 0);
    return buf;
  } finally {
    closeSync(fd);
  }
}

/** Throws an AssetError (and nothing else) naming the first file of `dir` that is missing, cut short or inconsistent. */
export function checkMinilmFiles(dir: string): void {
  const sizes = recordedSizes(dir);
  for (const name of REQUIRED) {
    const path = join(dir, name);
    const size = onFile(path, () => statSync(path).size);
    if (size !== sizes.get(name))
      throw new AssetError(
        path,
        `corrupt (${size} bytes, SOURCE.json records ${sizes.get(name)}${crlfHint(path)})`,
        FIX,
      );
  }
  const words = join(dir, 'words.int8.bin');
  const head = onFile(words, () => readHead(words, 8));
  const rows = head.readUInt32LE(0);
  const dims = head.readUInt32LE(4);
  if (dims !== DIMENSIONS || 8 + rows * (4 + dims) !== sizes.get('words.int8.bin'))
    throw new AssetError(words, `corrupt (header says ${rows} rows of ${dims})`, FIX);
  const vocab = join(dir, 'vocab.txt');
  // A token's id is its line number (parseVocab), so the lines must match the rows one to one.
  const text = onFile(vocab, () => readFileSync(vocab));
  let lines = text.length > 0 && text[text.length - 1] !== 0x0a ? 1 : 0;
  for (let at = text.indexOf(0x0a); at !== -1; at = text.indexOf(0x0a, at + 1)) lines++;
  if (lines !== rows) throw new AssetError(vocab, `corrupt (${lines} lines for ${rows} word rows)`, FIX);
}
