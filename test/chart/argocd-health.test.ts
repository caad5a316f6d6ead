/**
 * The Argo CD health check of docs/argocd.md, run for real: the Lua is taken from the page
 * (so the documented script is the tested one), given sample Gantry objects as Argo CD gives
 * them (`obj`, a Lua table of the object) and run with lua5.4.
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { KIND_INFO } from '../../crds/src/render.ts';

const run = promisify(execFile);
const doc = readFileSync(new URL('../../docs/argocd.md', import.meta.url), 'utf8');

/** The argocd-cm ConfigMap: the first ```yaml block of the page. */
const configMap = parse(/```yaml\n([\s\S]*?)```/.exec(doc)?.[1] ?? '') as { data?: Record<string, string> };
const PREFIX = 'resource.customizations.health.gantry.dev_';
const scripts = Object.entries(configMap.data ?? {}).filter(([key]) => key.startsWith(PREFIX));
const script = scripts[0]?.[1] ?? '';

/** A JSON value as a Lua constructor, the shape Argo CD hands the script. */
function toLua(value: unknown): string {
  if (value === null || value === undefined) return 'nil';
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (Array.isArray(value)) return `{${value.map(toLua).join(', ')}}`;
  const fields = Object.entries(value as Record<string, unknown>).map(
    ([key, sub]) => `[${JSON.stringify(key)}] = ${toLua(sub)}`,
  );
  return `{${fields.join(', ')}}`;
}

async function health(obj: object): Promise<{ status: string; message: string }> {
  // The script is a function body that returns hs, as in Argo CD.
  const program = `obj = ${toLua(obj)}\nlocal hs = (function()\n${script}\nend)()\nio.write(hs.status, "\\n", hs.message or "")`;
  const { stdout } = await run('lua5.4', ['-e', program]);
  const [status = '', ...rest] = stdout.split('\n');
  return { status, message: rest.join('\n') };
}

const apiKey = (generation: number, status?: object) => ({
  apiVersion: 'gantry.dev/v1alpha1',
  kind: 'ApiKey',
  metadata: { name: 'team-a', namespace: 'gantry', generation },
  spec: { tenantRef: { name: 'team-a' }, secretRef: { name: 'team-a-key' } },
  ...(status ? { status } : {}),
});
const ready = (status: string, reason: string, observedGeneration?: number, message = 'details') => ({
  type: 'Ready',
  status,
  reason,
  message,
  ...(observedGeneration === undefined ? {} : { observedGeneration }),
  lastTransitionTime: '2026-11-25T12:00:00Z',
});

// Installs lua5.4 when `npm test` (scripts/ensure-lua.sh) has not.
beforeAll(async () => {
  await run('bash', [fileURLToPath(new URL('../../scripts/ensure-lua.sh', import.meta.url))]);
}, 10 * 60_000);

describe('Argo CD health check (docs/argocd.md)', () => {
  it('is registered for each of the five kinds, with one and the same script', () => {
    expect(scripts.map(([key]) => key.slice(PREFIX.length)).sort()).toEqual(Object.keys(KIND_INFO).sort());
    expect(new Set(scripts.map(([, text]) => text)).size).toBe(1);
    expect(script).toContain('Ready');
  });

  it.each([
    ['no status yet', apiKey(1), 'Progressing', /Waiting for the Gantry operator/],
    [
      'conditions without Ready',
      apiKey(1, { conditions: [{ type: 'Other', status: 'True' }] }),
      'Progressing',
      /operator/,
    ],
    [
      'Ready for an older generation',
      apiKey(3, { conditions: [ready('True', 'Accepted', 2)] }),
      'Progressing',
      /generation 3/,
    ],
    [
      'Ready with no observedGeneration',
      apiKey(3, { conditions: [ready('True', 'Accepted')] }),
      'Progressing',
      /generation 3/,
    ],
    [
      'Ready=True for this generation',
      apiKey(3, { conditions: [ready('True', 'Accepted', 3, 'ok')] }),
      'Healthy',
      /^Accepted: ok$/,
    ],
    [
      'Ready=True, generation only in status.observedGeneration',
      apiKey(4, { observedGeneration: 4, conditions: [ready('True', 'Accepted')] }),
      'Healthy',
      /Accepted/,
    ],
    [
      'Ready=False (a missing Tenant)',
      apiKey(2, { conditions: [ready('False', 'TenantNotFound', 2, 'Tenant team-a does not exist')] }),
      'Degraded',
      /^TenantNotFound: Tenant team-a does not exist$/,
    ],
    [
      'Ready=False while the key is generated',
      apiKey(1, { conditions: [ready('False', 'KeyPending', 1, 'generating a key into Secret team-a-key')] }),
      'Progressing',
      /KeyPending/,
    ],
    [
      'Ready=Unknown',
      apiKey(1, { conditions: [ready('Unknown', 'Reconciling', 1)] }),
      'Progressing',
      /Reconciling/,
    ],
    [
      'a stale False is not Degraded yet',
      apiKey(5, { conditions: [ready('False', 'SecretNotFound', 4)] }),
      'Progressing',
      /generation 5/,
    ],
  ])('%s', async (_name, obj, status, message) => {
    const result = await health(obj);
    expect(result.status).toBe(status);
    expect(result.message).toMatch(message);
  });

  it('judges every kind the same way', async () => {
    for (const kind of Object.keys(KIND_INFO)) {
      const obj = { ...apiKey(1, { conditions: [ready('False', 'InvalidSpec', 1)] }), kind };
      expect((await health(obj)).status, kind).toBe('Degraded');
    }
  });
});
