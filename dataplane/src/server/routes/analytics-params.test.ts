import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../errors.ts';
import { adminKeyHashFromEnv, MIN_ADMIN_KEY_CHARS, scopeTenant } from './analytics-auth.ts';
import { dateRange, dimensionFilters, limitParam } from './analytics-params.ts';

const NOW = Date.parse('2025-03-20T12:00:00Z');
const DEFAULT = { from: '2025-03-01', to: '2025-03-20' };

const paramOf = (f: () => unknown): string | undefined => {
  try {
    f();
  } catch (err) {
    if (err instanceof GatewayError) return err.param;
    throw err;
  }
  return undefined;
};

describe('dateRange', () => {
  it('uses the default without dates, and fills a missing end', () => {
    expect(dateRange({}, NOW, DEFAULT, 30)).toEqual(DEFAULT);
    expect(dateRange({ start_date: '', end_date: '' }, NOW, DEFAULT, 30)).toEqual(DEFAULT);
    expect(dateRange({ start_date: '2025-03-10' }, NOW, DEFAULT, 30)).toEqual({
      from: '2025-03-10',
      to: '2025-03-20',
    });
    expect(dateRange({ start_date: '2025-04-02' }, NOW, DEFAULT, 30)).toEqual({
      from: '2025-04-02',
      to: '2025-04-02',
    });
    expect(dateRange({ end_date: '2025-01-31' }, NOW, DEFAULT, 7)).toEqual({
      from: '2025-01-25',
      to: '2025-01-31',
    });
  });

  it('allows 366 days and no more', () => {
    expect(dateRange({ start_date: '2024-01-01', end_date: '2024-12-31' }, NOW, DEFAULT, 30).to).toBe(
      '2024-12-31',
    );
    expect(
      paramOf(() => dateRange({ start_date: '2024-01-01', end_date: '2025-01-01' }, NOW, DEFAULT, 30)),
    ).toBe('end_date');
  });

  it('names the bad parameter', () => {
    expect(paramOf(() => dateRange({ start_date: ['2025-03-01', '2025-03-02'] }, NOW, DEFAULT, 30))).toBe(
      'start_date',
    );
    expect(paramOf(() => dateRange({ end_date: '2025-02-29' }, NOW, DEFAULT, 30))).toBe('end_date');
  });
});

describe('limit and filters', () => {
  it('parses the limit', () => {
    expect(limitParam({})).toBe(100);
    expect(limitParam({ limit: '1000' })).toBe(1000);
    expect(paramOf(() => limitParam({ limit: '-1' }))).toBe('limit');
  });

  it('takes key or key_id, model and provider; empty means any', () => {
    expect(dimensionFilters({ key: 'default/a', model: '', provider: 'openai' })).toEqual({
      keyId: 'default/a',
      provider: 'openai',
    });
    expect(dimensionFilters({ key_id: 'default/a' })).toEqual({ keyId: 'default/a' });
    expect(paramOf(() => dimensionFilters({ key: 'a', key_id: 'b' }))).toBe('key');
  });
});

describe('analytics auth helpers', () => {
  it('hashes the bootstrap key (trimmed); unset means no platform admin', () => {
    expect(adminKeyHashFromEnv({})).toBeUndefined();
    const key = 'k'.repeat(MIN_ADMIN_KEY_CHARS);
    expect(adminKeyHashFromEnv({ GANTRY_ADMIN_KEY: ` ${key}\n` })).toEqual(
      createHash('sha256').update(key).digest(),
    );
  });

  it('refuses a key set but shorter than 32 characters after trim, blank included', () => {
    expect(MIN_ADMIN_KEY_CHARS).toBe(32);
    for (const short of ['', '  ', 'abc', ` ${'k'.repeat(31)} `])
      expect(() => adminKeyHashFromEnv({ GANTRY_ADMIN_KEY: short })).toThrow(
        /GANTRY_ADMIN_KEY must be at least 32 characters/,
      );
  });

  it('scopes tenants', () => {
    const admin = { kind: 'tenant-admin' as const, tenant: 'acme', keyId: 'default/a' };
    expect(scopeTenant(admin, undefined)).toBe('acme');
    expect(scopeTenant(admin, 'acme')).toBe('acme');
    expect(() => scopeTenant(admin, 'globex')).toThrow(GatewayError);
    expect(scopeTenant({ kind: 'platform' }, undefined)).toBeNull();
    expect(scopeTenant({ kind: 'platform' }, 'globex')).toBe('globex');
  });
});

describe('starting the gateway', () => {
  it('stops on an admin key that is too short, naming the variable, before reading any config', async () => {
    const { startGateway } = await import('../../gateway.ts');
    await expect(
      startGateway({ configFile: '/nonexistent/gantry.yaml', env: { GANTRY_ADMIN_KEY: 'abc' } }),
    ).rejects.toThrow(/GANTRY_ADMIN_KEY must be at least 32 characters, got 3/);
  });
});
