/** The gantry command line as an operator meets it: help, version and one-line refusals. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT, runCli } from '../harness/gateway-spawn.ts';

const VERSION = (JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string })
  .version;

/** A refusal: exit code 2, exactly one line on stderr, no stack trace. */
async function refused(args: string[], env: Record<string, string> = {}): Promise<string> {
  const r = await runCli(args, env);
  expect(r.code).toBe(2);
  expect(r.stdout).toBe('');
  const lines = r.stderr.trimEnd().split('\n');
  expect(lines).toHaveLength(1);
  expect(r.stderr).not.toMatch(/\n\s+at /);
  return lines[0]!;
}

describe('gantry command line', () => {
  it('--help prints usage with every flag and exits 0', async () => {
    const r = await runCli(['--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^Usage: gantry \[options\]/);
    for (const flag of [
      '--config',
      '--port',
      '--fake-provider',
      '--receive-timeout-ms',
      '--drain-timeout-ms',
    ])
      expect(r.stdout).toContain(flag);
  });

  it('--version prints the version and exits 0', async () => {
    const r = await runCli(['--version']);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(`gantry ${VERSION}\n`);
  });

  it('refuses an unknown flag', async () => {
    expect(await refused(['--bogus'])).toBe("gantry: Unknown option '--bogus' (see --help)");
  });

  it('refuses an invalid enum value', async () => {
    expect(await refused(['--fake-provider', 'bogus'])).toBe(
      'gantry: --fake-provider must be one of auto, off, got "bogus"',
    );
  });

  it('refuses a malformed port, flag or environment', async () => {
    expect(await refused(['--port', 'abc'])).toBe(
      'gantry: --port must be an integer from 0 to 65535, got "abc"',
    );
    expect(await refused([], { GANTRY_MAX_BODY_BYTES: '1e6' })).toBe(
      'gantry: GANTRY_MAX_BODY_BYTES must be a positive integer (bytes), got "1e6"',
    );
  });
});
