/**
 * The minilm files under configs that arrive after start-up, with a real gateway: a hot reload
 * that first turns a minilm cache on runs the start-up check, and a missing file is one error
 * log naming it while the gateway keeps serving (the cache fails open as a miss). And the
 * folder comes from the gateway's own env for both the check and the embedder.
 */
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { rename, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import OpenAI from 'openai';
import { afterAll, describe, expect, it } from 'vitest';
import type { ReloadEvent } from '../../dataplane/src/config/store.ts';
import { apiKey, deployment, fakeBase, startStack, tenant, type Stack } from '../harness/stack.ts';
import { logSink, type LogLine } from '../harness/log-sink.ts';

const KEY = 'sk-minilm-late';
const models = resolve(import.meta.dirname, '../../models/minilm');
const temps: string[] = [];
const tempDir = (): string => {
  const dir = mkdtempSync(join(tmpdir(), 'gantry-minilm-late-'));
  temps.push(dir);
  return dir;
};
afterAll(() => temps.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

function config(fakeUrl: string, cache: boolean): string {
  return [
    tenant('acme', ['*'], { cache: { enabled: cache } }),
    deployment({ name: 'model-a', model: 'model-a', baseUrl: fakeBase(fakeUrl) }),
    apiKey('acme-key', KEY, 'acme'),
  ].join('');
}

/** The next reload event, or a failure after a bounded wait. */
function nextReload(stack: Stack, timeoutMs = 10_000): Promise<ReloadEvent> {
  return new Promise((done, fail) => {
    const timer = setTimeout(() => {
      off();
      fail(new Error(`no config reload within ${timeoutMs} ms`));
    }, timeoutMs);
    const off = stack.gateway.config.onReload((event) => {
      clearTimeout(timer);
      off();
      done(event);
    });
  });
}

/** Replaces the config file as editors and ConfigMap updates do, and waits for the reload. */
async function replaceConfig(stack: Stack, text: string): Promise<ReloadEvent> {
  const reloaded = nextReload(stack);
  const aside = join(dirname(stack.configFile), '.gantry.yaml.next');
  await writeFile(aside, text);
  await rename(aside, stack.configFile);
  return reloaded;
}

const ask = (stack: Stack, content: string) =>
  new OpenAI({ baseURL: stack.baseURL, apiKey: KEY, maxRetries: 0 }).chat.completions.create({
    model: 'model-a',
    messages: [{ role: 'user', content }],
  });

const minilmErrors = (lines: LogLine[]) =>
  lines.filter((l) => /minilm cache embedder unavailable/.test(l.msg));

describe('minilm under a config that arrives after start-up', () => {
  it('a reload that turns a minilm cache on checks the files: one error naming the file, and the gateway keeps serving', async () => {
    const dir = tempDir();
    const lines: LogLine[] = [];
    let fakeUrl = '';
    const stack = await startStack(
      ([url]) => {
        fakeUrl = url!;
        return config(url!, false);
      },
      {
        env: { FAKE_PROVIDER_KEY: 'sk-fake', GANTRY_MINILM_DIR: dir },
        watch: true,
        logger: { level: 'info', stream: logSink(lines) },
      },
    );
    try {
      // Started: no tenant needs minilm, so the empty folder was not looked at.
      expect(minilmErrors(lines)).toEqual([]);
      expect((await replaceConfig(stack, config(fakeUrl, true))).ok).toBe(true);
      const errors = minilmErrors(lines);
      expect(errors).toHaveLength(1);
      expect(errors[0]?.level).toBe(50);
      expect(errors[0]?.file).toBe(join(dir, 'SOURCE.json'));
      expect(errors[0]?.msg).toContain(`${join(dir, 'SOURCE.json')}: missing`);
      // Serving on: the cache misses and the model answers.
      expect((await ask(stack, 'What is the capital of France?')).choices[0]?.message.content).toBeTruthy();
      // Every lookup fails to embed, but only the first of an interval warns.
      for (const q of ['Capital of Spain?', 'Capital of Italy?', 'Capital of Peru?'])
        expect((await ask(stack, q)).choices[0]?.message.content).toBeTruthy();
      const warned = lines.filter((l) => /semantic cache unavailable/.test(l.msg));
      expect(warned.map((l) => [l.level, l.operation])).toEqual([[40, 'embed']]);
      const metrics = await (await fetch(`${stack.gateway.adminUrl}/metrics`)).text();
      expect(metrics).toMatch(/^gantry_cache_failures_total\{[^}]*operation="embed"[^}]*\} 4$/m);

      // Files put in place: the next snapshot's check passes, silently, and is not run again.
      cpSync(models, dir, { recursive: true });
      expect((await replaceConfig(stack, config(fakeUrl, true) + '\n')).ok).toBe(true);
      expect(minilmErrors(lines)).toHaveLength(1);
      rmSync(join(dir, 'SOURCE.json'));
      expect((await replaceConfig(stack, config(fakeUrl, true))).ok).toBe(true);
      expect(minilmErrors(lines)).toHaveLength(1);
    } finally {
      await stack.close();
    }
  }, 60_000);

  it("the embedder reads the folder of the gateway's env, the one the start-up check passed", async () => {
    const lines: LogLine[] = [];
    const before = process.env.GANTRY_MINILM_DIR;
    // A process env that disagrees with the gateway's: the embedder must not look here.
    process.env.GANTRY_MINILM_DIR = '/nonexistent/process-env-minilm';
    const stack = await startStack(([url]) => config(url!, true), {
      env: { FAKE_PROVIDER_KEY: 'sk-fake', GANTRY_MINILM_DIR: models },
      logger: { level: 'info', stream: logSink(lines) },
    });
    try {
      expect((await ask(stack, 'How do I bake bread at home?')).choices[0]?.message.content).toBeTruthy();
      const failures = lines.filter((l) => /semantic cache unavailable/.test(l.msg));
      expect(failures, JSON.stringify(failures)).toEqual([]);
      const metrics = await (await fetch(`${stack.gateway.adminUrl}/metrics`)).text();
      expect(metrics).not.toMatch(/^gantry_cache_failures_total\{[^}]*\} [1-9]/m);
    } finally {
      await stack.close();
      if (before === undefined) delete process.env.GANTRY_MINILM_DIR;
      else process.env.GANTRY_MINILM_DIR = before;
    }
  }, 60_000);
});
