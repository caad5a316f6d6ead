/**
 * A config edit that revokes a key and also breaks something unrelated (issue 9.11): the
 * file is rejected, the revocation applies anyway, /readyz stays 200 while its body and
 * gantry_config_reload_rejected report the rejection, and a valid file clears it.
 */
import { rename, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ReloadEvent } from '../../dataplane/src/config/store.ts';
import { apiKey, deployment, fakeBase, manifest, startStack, tenant, type Stack } from '../harness/stack.ts';

const ALICE = 'sk-alice-revoke';
const BOB = 'sk-bob-stays';

let stack: Stack;
let fakeUrl: string;

const config = (aliceExtra: Record<string, unknown> = {}, extra: string[] = []): string =>
  [
    tenant('acme'),
    deployment({ name: 'model-a', model: 'model-a', baseUrl: fakeBase(fakeUrl) }),
    apiKey('alice', ALICE, 'acme', aliceExtra),
    apiKey('bob', BOB, 'acme'),
    ...extra,
  ].join('');
/** Unrelated to keys: a tenant naming a GuardrailPolicy that does not exist. */
const unrelatedError = manifest('Tenant', 'broken', {
  models: ['*'],
  guardrails: { policyRef: { name: 'nope' } },
});

beforeAll(async () => {
  stack = await startStack(
    ([url]) => {
      fakeUrl = url!;
      return config();
    },
    { watch: true },
  );
});
afterAll(() => stack?.close());

function nextReload(timeoutMs = 10_000): Promise<ReloadEvent> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no config reload within ${timeoutMs} ms`)), timeoutMs);
    const off = stack.gateway.config.onReload((event) => {
      clearTimeout(timer);
      off();
      resolve(event);
    });
  });
}

async function replaceConfig(text: string): Promise<ReloadEvent> {
  const reloaded = nextReload();
  const aside = join(dirname(stack.configFile), '.next.yaml');
  await writeFile(aside, text);
  await rename(aside, stack.configFile);
  return reloaded;
}

const models = (key: string) =>
  fetch(`${stack.baseURL}/models`, { headers: { authorization: `Bearer ${key}` } }).then((r) => r.status);

interface Readyz {
  status: string;
  configVersion: number;
  config: {
    status: string;
    version: number;
    sha256?: string;
    rejectedSha256?: string;
    since?: string;
    reason?: string[];
    revokedKeys?: string[];
  };
}
async function readyz(): Promise<{ status: number; body: Readyz }> {
  const res = await fetch(`${stack.gateway.adminUrl}/readyz`);
  return { status: res.status, body: (await res.json()) as Readyz };
}

async function metric(name: string): Promise<number> {
  const text = await (await fetch(`${stack.gateway.adminUrl}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name} `) || l.startsWith(`${name}{`));
  return line ? Number(line.split(' ').at(-1)) : Number.NaN;
}

describe('a rejected edit that revokes a key', () => {
  it('revokes the key anyway, keeps the rest serving and reports the rejection', async () => {
    expect(await models(ALICE)).toBe(200);
    const before = await readyz();
    expect(before.body.config).toMatchObject({ status: 'ok', version: before.body.configVersion });
    expect(before.body.config.sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(await metric('gantry_config_reload_rejected')).toBe(0);

    const event = await replaceConfig(config({ disabled: true }, [unrelatedError]));
    expect(event.ok).toBe(false);
    expect(!event.ok && event.revoked).toEqual(['default/alice']);

    expect(await models(ALICE)).toBe(401);
    expect(await models(BOB)).toBe(200);

    const after = await readyz();
    expect(after.status).toBe(200);
    expect(after.body.status).toBe('ready');
    expect(after.body.config.status).toBe('rejected');
    expect(after.body.config.reason?.join('\n')).toMatch(/GuardrailPolicy nope not found/);
    expect(after.body.config.revokedKeys).toEqual(['default/alice']);
    expect(after.body.config.sha256).toBe(before.body.config.sha256);
    expect(after.body.config.rejectedSha256).toMatch(/^[0-9a-f]{64}$/);
    expect(after.body.config.rejectedSha256).not.toBe(before.body.config.sha256);
    expect(Date.parse(after.body.config.since ?? '')).toBeGreaterThan(0);
    expect(await metric('gantry_config_reload_rejected')).toBe(1);
    expect(await metric('gantry_config_revoked_keys_total')).toBe(1);
    expect(await metric('gantry_config_version')).toBe(after.body.configVersion);
  });

  it('a deleted key document waits for a valid file (a cut-short file looks the same)', async () => {
    const withoutBob = [
      tenant('acme'),
      deployment({ name: 'model-a', model: 'model-a', baseUrl: fakeBase(fakeUrl) }),
      apiKey('alice', ALICE, 'acme', { disabled: true }),
      unrelatedError,
    ].join('');
    const event = await replaceConfig(withoutBob);
    expect(!event.ok && event.revoked).toEqual([]);
    expect(await models(BOB)).toBe(200);
    expect((await readyz()).body.config.status).toBe('rejected');
  });

  it('a valid file clears the rejection', async () => {
    const event = await replaceConfig(config());
    expect(event.ok).toBe(true);
    const ready = await readyz();
    expect(ready.body.config.status).toBe('ok');
    expect(ready.body.config.reason).toBeUndefined();
    expect(await metric('gantry_config_reload_rejected')).toBe(0);
    expect(await models(ALICE)).toBe(200);
  });
});
