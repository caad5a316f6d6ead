import { describe, expect, it } from 'vitest';
import { MemoryOwnershipStore } from './memory.ts';
import { ownedBy, type OwnedRecord } from './types.ts';

const record = (tenant: string, id: string, family: OwnedRecord['family'] = 'file'): OwnedRecord => ({
  family,
  id,
  tenant,
  keyId: `default/${tenant}`,
  deployment: 'files-dep',
  model: 'm',
  createdAt: 1_000,
});

describe('MemoryOwnershipStore bounds', () => {
  it("one tenant's flood of uploads past the bound evicts its own oldest records, never another tenant's", async () => {
    const store = new MemoryOwnershipStore(() => 5_000, 10);
    await store.put(record('globex', 'file-g'));
    await store.put(record('globex', 'batch-g', 'batch'));
    for (let i = 0; i < 500; i++) await store.put(record('acme', `file-${i}`));
    const kept = await store.get('globex', 'file', 'file-g');
    expect(ownedBy(kept, { tenant: 'globex', keyId: 'default/globex' })?.id).toBe('file-g');
    expect((await store.get('globex', 'batch', 'batch-g'))?.id).toBe('batch-g');
    expect(
      (await store.list({ tenant: 'globex', keyId: 'default/globex' }, 'file')).map((r) => r.id),
    ).toEqual(['file-g']);
    expect((await store.unsettled(10)).map((r) => r.id)).toEqual(['batch-g']);
    // The flooder keeps the rest of the bound, its newest; another tenant still finds nothing.
    expect(await store.get('acme', 'file', 'file-499')).toBeDefined();
    expect(await store.get('acme', 'file', 'file-492')).toBeDefined();
    expect(await store.get('acme', 'file', 'file-491')).toBeUndefined();
    expect(await store.get('acme', 'file', 'file-g')).toBeUndefined();
    expect(await store.list({ tenant: 'acme', keyId: 'default/acme' }, 'file')).toHaveLength(8);
  });

  it("one tenant's flood of claims never frees another tenant's: a settled batch stays settled", async () => {
    const store = new MemoryOwnershipStore(() => 5_000, 10);
    const g = { id: 'batch-g', createdAt: 1_000 };
    expect(await store.claim('globex', 'batch', g, 'settled')).toBe(true);
    for (let i = 0; i < 500; i++)
      expect(await store.claim('acme', 'batch', { id: `batch-${i}`, createdAt: 2_000 + i }, 'settled')).toBe(
        true,
      );
    expect(await store.claim('globex', 'batch', g, 'settled')).toBe(false);
    expect(await store.claimed('globex', 'batch', [g], 'settled')).toEqual([true]);
    // acme's own oldest claims were evicted: they (and anything created before) stay refused.
    const asked = [499, 0, 200].map((i) => ({ id: `batch-${i}`, createdAt: 2_000 + i }));
    expect(await store.claimed('acme', 'batch', asked, 'settled')).toEqual([true, true, true]);
    expect(await store.claim('acme', 'batch', asked[1]!, 'settled')).toBe(false);
    expect(await store.claim('acme', 'batch', { id: 'old-unclaimed', createdAt: 1 }, 'settled')).toBe(false);
    // A job created after the newest evicted claim's is claimed as usual, once.
    const fresh = { id: 'batch-new', createdAt: 10_000 };
    expect(await store.claim('acme', 'batch', fresh, 'settled')).toBe(true);
    expect(await store.claim('acme', 'batch', fresh, 'settled')).toBe(false);
    // The watermark is per tenant, scope and mark.
    expect(await store.claim('acme', 'fine_tuning_job', { id: 'ft', createdAt: 1 }, 'settled')).toBe(true);
    expect(await store.claim('globex', 'batch', { id: 'old-g', createdAt: 1 }, 'settled')).toBe(true);
  });

  it("no batch is charged twice when another tenant's fine-tuning claims fill the bound", async () => {
    // The reviewer's scenario: B settles 60 batches, then A settles 60 fine-tuning jobs (claims
    // with no ownership record) against a bound of 100; every B batch must stay refused.
    const store = new MemoryOwnershipStore(() => 1_000, 100);
    const batch = (i: number) => ({ ...record('B', `b${i}`, 'batch'), createdAt: 1 + i });
    for (let i = 0; i < 60; i++) {
      await store.put(batch(i));
      expect(await store.claim('B', 'batch', batch(i), 'settled')).toBe(true);
    }
    for (let i = 0; i < 60; i++)
      expect(await store.claim('A', 'fine_tuning_job', { id: `ft${i}`, createdAt: 1 + i }, 'settled')).toBe(
        true,
      );
    const all = Array.from({ length: 60 }, (_, i) => batch(i));
    expect(await store.claimed('B', 'batch', all, 'settled')).toEqual(all.map(() => true));
    let live = 0;
    let again = 0;
    for (const b of all)
      if (await store.get('B', 'batch', b.id)) {
        live++;
        if (await store.claim('B', 'batch', b, 'settled')) again++;
      }
    expect(live).toBe(60);
    expect(again).toBe(0);
    // ...and no fine-tuning job of A's either.
    for (let i = 0; i < 60; i++)
      expect(await store.claim('A', 'fine_tuning_job', { id: `ft${i}`, createdAt: 1 + i }, 'settled')).toBe(
        false,
      );
  });
});
