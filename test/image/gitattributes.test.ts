/**
 * The model files reach every checkout byte for byte: .gitattributes keeps core.autocrlf (a
 * Windows default) from rewriting them, which made vocab.txt fail its start-up size check.
 */
import { execFile } from 'node:child_process';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { BUNDLED_ASSETS } from '../../dataplane/src/assets.ts';

const run = promisify(execFile);
const repo = resolve(import.meta.dirname, '../..');

describe('.gitattributes', () => {
  it('marks the minilm files and the bundled guard model as never converted (text unset)', async () => {
    const files = [
      'models/minilm/vocab.txt',
      'models/minilm/SOURCE.json',
      'models/minilm/words.int8.bin',
      'models/minilm/encoder.int8.onnx',
      ...BUNDLED_ASSETS.map((a) => `dataplane/src/${a}`),
    ];
    const { stdout } = await run('git', ['check-attr', 'text', '--', ...files], { cwd: repo });
    const lines = stdout.trim().split('\n');
    expect(lines).toHaveLength(files.length);
    for (const [i, file] of files.entries()) expect(lines[i]).toBe(`${file}: text: unset`);
  });
});
