import type { V1Secret } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { DecodedSecrets } from './secret-data.ts';

const secret = (
  name: string,
  uid: string,
  resourceVersion: string | undefined,
  data: Record<string, string>,
) =>
  ({
    metadata: { name, uid, ...(resourceVersion === undefined ? {} : { resourceVersion }) },
    data: Object.fromEntries(Object.entries(data).map(([k, v]) => [k, Buffer.from(v).toString('base64')])),
  }) satisfies V1Secret;

describe('DecodedSecrets', () => {
  const a = secret('openai', 'uid-a', '10', { apiKey: 'sk-A' });
  const b = secret('ci-key', 'uid-b', '11', { key: 'gk-B' });

  it('decodes each Secret once per resourceVersion', () => {
    const d = new DecodedSecrets();
    const first = d.decode([a, b]);
    expect(first.get('openai')).toEqual({ apiKey: 'sk-A' });
    expect(first.get('ci-key')).toEqual({ key: 'gk-B' });
    expect(d.decodes).toBe(2);
    // An unchanged namespace, as every resync reconciles it: nothing decoded (two each time before).
    for (let i = 0; i < 5; i++) expect(d.decode([structuredClone(a), structuredClone(b)])).toEqual(first);
    expect(d.decodes).toBe(2);
    // A new version of one is decoded again, the other is not.
    const rotated = secret('openai', 'uid-a', '12', { apiKey: 'sk-NEW' });
    expect(d.decode([rotated, b]).get('openai')).toEqual({ apiKey: 'sk-NEW' });
    expect(d.decodes).toBe(3);
  });

  it('tells a Secret made again under the same name by its uid', () => {
    const d = new DecodedSecrets();
    d.decode([a]);
    // Same name and (by chance) the same resourceVersion string, another object.
    const again = secret('openai', 'uid-a2', '10', { apiKey: 'sk-OTHER' });
    expect(d.decode([again]).get('openai')).toEqual({ apiKey: 'sk-OTHER' });
    expect(d.decodes).toBe(2);
  });

  it('remembers only the Secrets listed now', () => {
    const d = new DecodedSecrets();
    const many = Array.from({ length: 50 }, (_, i) => secret(`s${i}`, `uid-${i}`, '1', { k: `v${i}` }));
    d.decode(many);
    expect(d.size).toBe(50);
    d.decode([a]);
    expect(d.size).toBe(1);
    expect(d.decode([a]).size).toBe(1);
    expect(d.decodes).toBe(51);
  });

  it('decodes a Secret without a resourceVersion every time', () => {
    const d = new DecodedSecrets();
    const bare = secret('bare', 'uid-x', undefined, { k: 'v' });
    d.decode([bare]);
    d.decode([bare]);
    expect(d.decodes).toBe(2);
    expect(d.size).toBe(0);
  });

  it('hands out data no reconcile can change for the next', () => {
    const d = new DecodedSecrets();
    const data = d.decode([a]).get('openai') as Record<string, string>;
    expect(() => {
      data.apiKey = 'changed';
    }).toThrow(TypeError);
    expect(d.decode([a]).get('openai')).toEqual({ apiKey: 'sk-A' });
  });
});
