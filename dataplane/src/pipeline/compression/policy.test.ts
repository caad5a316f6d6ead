import { describe, expect, it } from 'vitest';
import { chooseExtractionModel, resolveCompressionPolicy, type ModelOption } from './policy.ts';

describe('resolveCompressionPolicy', () => {
  it('is on by default with Gantry defaults', () => {
    expect(resolveCompressionPolicy({})).toEqual({
      enabled: true,
      thresholdTokens: 8000,
      stepWindow: 4,
      extractionModel: undefined,
    });
  });

  it('takes the tenant block', () => {
    expect(
      resolveCompressionPolicy({
        compression: { enabled: false, thresholdTokens: 100, stepWindow: 0, extractionModel: 'm' },
      }),
    ).toEqual({ enabled: false, thresholdTokens: 100, stepWindow: 0, extractionModel: 'm' });
    expect(
      resolveCompressionPolicy({ compression: { enabled: true, extractionModel: '' } }).extractionModel,
    ).toBeUndefined();
  });
});

describe('chooseExtractionModel', () => {
  const opts: ModelOption[] = [
    { model: 'big', usable: true, pricePerMillion: 20 },
    { model: 'mini', usable: true, pricePerMillion: 0.75 },
    { model: 'nano', usable: false, pricePerMillion: 0.1 },
    { model: 'free', usable: true, pricePerMillion: undefined },
    { model: 'mini2', usable: true, pricePerMillion: 0.75 },
  ];

  it('the named model when usable, else none (never a silent substitute)', () => {
    expect(chooseExtractionModel('big', opts, 'big')).toBe('big');
    expect(chooseExtractionModel('nano', opts, 'big')).toBeUndefined();
    expect(chooseExtractionModel('ghost', opts, 'big')).toBeUndefined();
  });

  it('otherwise the cheapest priced usable model, ties by name', () => {
    expect(chooseExtractionModel(undefined, opts, 'big')).toBe('mini');
  });

  it('with nothing priced, the requested model; with nothing usable, none', () => {
    expect(
      chooseExtractionModel(undefined, [{ model: 'a', usable: true, pricePerMillion: undefined }], 'a'),
    ).toBe('a');
    expect(
      chooseExtractionModel(undefined, [{ model: 'a', usable: false, pricePerMillion: 1 }], 'a'),
    ).toBeUndefined();
  });
});
