import { describe, expect, it } from 'vitest';
import { imageUnits, unitCostUsd } from './pricing.ts';

describe('imageUnits', () => {
  it('counts started 1024×1024 blocks, doubled for hd/high', () => {
    expect(imageUnits('1024x1024', undefined)).toBe(1);
    expect(imageUnits('512x512', 'standard')).toBe(1);
    expect(imageUnits('1792x1024', undefined)).toBe(2);
    expect(imageUnits('1024x1024', 'hd')).toBe(2);
    expect(imageUnits('1536x1024', 'high')).toBe(4);
  });
  it('assumes the large size for the estimate and the default size for settlement when none is known', () => {
    expect(imageUnits(undefined, undefined)).toBe(2);
    expect(imageUnits('auto', undefined)).toBe(2);
    expect(imageUnits(undefined, undefined, 1)).toBe(1);
  });
});

describe('unitCostUsd', () => {
  it('is whole micro-dollars, never rounding a paid unit to free', () => {
    expect(
      unitCostUsd({ inputPerMillionTokens: 0, outputPerMillionTokens: 0, perImage: 0.04 }, 'perImage', 3),
    ).toBe(0.12);
    expect(
      unitCostUsd(
        { inputPerMillionTokens: 0, outputPerMillionTokens: 0, perCharacter: 1e-9 },
        'perCharacter',
        1,
      ),
    ).toBe(0.000001);
  });
  it('is free when the deployment has no price for the unit', () => {
    expect(unitCostUsd({ inputPerMillionTokens: 1, outputPerMillionTokens: 1 }, 'perSecond', 10)).toBe(0);
    expect(unitCostUsd(undefined, 'perImage', 1)).toBe(0);
  });
});
