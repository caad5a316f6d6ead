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
    expect(await store.claim('globex', 'batch', 'batch-g', 'settled')).toBe(true);
    for (let i = 0; i < 500; i++)
      expect(await store.claim('acme', 'batch', `batch-${i}`, 'settled')).toBe(true);
    expect(await store.claim('globex', 'batch', 'batch-g', 'settled')).toBe(false);
    expect(await store.claimed('globex', 'batch', ['batch-g'], 'settled')).toEqual([true]);
    expect(await store.claimed('acme', 'batch', ['batch-499', 'batch-0'], 'settled')).toEqual([true, false]);
  });
});
