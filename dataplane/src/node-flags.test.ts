import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { NODE_FLAGS } from './node-flags.ts';

const repo = new URL('../../', import.meta.url);
const read = (path: string): string => readFileSync(new URL(path, repo), 'utf8');

/** The `--` options between `node` and the entry script in one command line. */
function flagsOf(command: string[]): string[] {
  const node = command.indexOf('node');
  const script = command.findIndex((arg, i) => i > node && arg.endsWith('.mjs'));
  return command.slice(node + 1, script === -1 ? undefined : script);
}

describe('the data plane runs with NODE_FLAGS everywhere', () => {
  it('npm start (scripts/start.sh)', () => {
    const line = read('scripts/start.sh')
      .split('\n')
      .find((l) => l.startsWith('exec node '));
    expect(line, 'an `exec node ...` line in start.sh').toBeDefined();
    expect(flagsOf(line!.split(/\s+/))).toEqual(NODE_FLAGS);
  });

  it("the image's ENTRYPOINT", () => {
    const line = read('Dockerfile')
      .split('\n')
      .find((l) => l.startsWith('ENTRYPOINT '));
    expect(line, 'an ENTRYPOINT in the Dockerfile').toBeDefined();
    expect(flagsOf(JSON.parse(line!.slice('ENTRYPOINT '.length)) as string[])).toEqual(NODE_FLAGS);
  });

  it("the chart's data-plane container command", () => {
    // The pod template both workloads render (Deployment, or StatefulSet with a journal volume).
    const line = read('charts/gantry/templates/_dataplane-pod.tpl')
      .split('\n')
      .map((l) => l.trim())
      .find((l) => l.startsWith('command:') && l.includes('dataplane/dist/gantry.mjs'));
    expect(line, 'the data plane command in _dataplane-pod.tpl').toBeDefined();
    expect(flagsOf(JSON.parse(line!.slice('command:'.length)) as string[])).toEqual(NODE_FLAGS);
  });
});
