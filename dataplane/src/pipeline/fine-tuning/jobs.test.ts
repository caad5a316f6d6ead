import { describe, expect, it } from 'vitest';
import { MAX_ESTIMATE_USD } from '../../accounting/estimate.ts';
import {
  pricedTraining,
  clientView,
  createdOn,
  creatorOf,
  jobSettlementId,
  MAX_EPOCHS,
  MAX_TRAINED_TOKENS,
  OWNER_KEYS,
  ownedMetadata,
  trainingCharge,
  trainingHoldUsd,
  worstCaseEpochs,
} from './jobs.ts';
import { toMicros } from '../../stores/money.ts';

describe('trainingCharge', () => {
  it.each([
    [
      'succeeded',
      { status: 'succeeded', trained_tokens: 2_000_000 },
      3,
      { trainedTokens: 2_000_000, costUsd: 6 },
    ],
    [
      'succeeded, nothing trained',
      { status: 'succeeded', trained_tokens: 0 },
      3,
      { trainedTokens: 0, costUsd: 0 },
    ],
    ['running', { status: 'running', trained_tokens: null }, 3, undefined],
    ['failed after some training', { status: 'failed', trained_tokens: 500 }, 3, undefined],
    ['cancelled', { status: 'cancelled', trained_tokens: 500 }, 3, undefined],
    ['no training price', { status: 'succeeded', trained_tokens: 500 }, undefined, undefined],
    ['tokens as text', { status: 'succeeded', trained_tokens: '500' }, 3, undefined],
    ['negative tokens', { status: 'succeeded', trained_tokens: -1 }, 3, undefined],
    ['infinite tokens', { status: 'succeeded', trained_tokens: Infinity }, 3, undefined],
  ] as const)('%s', (_name, job, price, expected) => {
    expect(trainingCharge(job, price)).toEqual(expected);
  });
});

describe("a job's worst case", () => {
  it('takes the n_epochs that apply, else the most the provider may choose', () => {
    expect(worstCaseEpochs({})).toEqual({ epochs: MAX_EPOCHS, fixed: false });
    expect(worstCaseEpochs({ hyperparameters: { n_epochs: 'auto' } })).toEqual({
      epochs: MAX_EPOCHS,
      fixed: false,
    });
    expect(worstCaseEpochs({ hyperparameters: { n_epochs: 2 } })).toEqual({ epochs: 2, fixed: true });
    expect(
      worstCaseEpochs({
        hyperparameters: { n_epochs: 2 },
        method: { type: 'dpo', dpo: { hyperparameters: { n_epochs: 4.5 } } },
      }),
    ).toEqual({ epochs: 5, fixed: true });
  });

  it("with a method, reads only that method's hyperparameters, and its auto is the most", () => {
    const auto = { epochs: MAX_EPOCHS, fixed: false };
    const supervised = (n_epochs: unknown) => ({
      type: 'supervised',
      supervised: { hyperparameters: { n_epochs } },
    });
    expect(worstCaseEpochs({ hyperparameters: { n_epochs: 1 }, method: supervised('auto') })).toEqual(auto);
    expect(worstCaseEpochs({ hyperparameters: { n_epochs: 1 }, method: { type: 'supervised' } })).toEqual(
      auto,
    );
    // Another method's block does not train.
    expect(
      worstCaseEpochs({ method: { type: 'dpo', supervised: { hyperparameters: { n_epochs: 1 } } } }),
    ).toEqual(auto);
    expect(worstCaseEpochs({ method: { supervised: { hyperparameters: { n_epochs: 1 } } } })).toEqual(auto);
    expect(worstCaseEpochs({ hyperparameters: { n_epochs: 9 }, method: supervised(2) })).toEqual({
      epochs: 2,
      fixed: true,
    });
  });

  it('is every epoch over the file at the training price, within the estimator ceiling', () => {
    expect(trainingHoldUsd(1_000, 3, 25_000)).toBeCloseTo(75, 10);
    expect(trainingHoldUsd(1_000, 3, undefined)).toBe(0);
    expect(trainingHoldUsd(1e300, 1e300, 1e300)).toBe(MAX_ESTIMATE_USD);
  });
});

describe("a job's creating deployment", () => {
  const owner = { tenant: 'acme', keyId: 'default/k' };

  it('is written at create, reserved from the caller, and hidden from it', () => {
    const sent = createdOn({ model: 'm', metadata: ownedMetadata({ team: 'x' }, owner, 'm') }, 'tuner-a');
    expect(sent.metadata).toMatchObject({ team: 'x', [OWNER_KEYS.deployment]: 'tuner-a' });
    expect(() => ownedMetadata({ [OWNER_KEYS.deployment]: 'tuner-b' }, owner, 'm')).toThrow(/reserved/);
    const view = clientView({ id: 'ftjob-1', ...sent }, 'tuner-b');
    expect(view.metadata).toEqual({ team: 'x' });
  });

  it('names the settlement whichever deployment of its account reads it; older jobs fall back to the reader', () => {
    const job = { id: 'ftjob-1', metadata: { [OWNER_KEYS.deployment]: 'tuner-a' } };
    expect(creatorOf(job, 'tuner-b')).toBe('tuner-a');
    expect(jobSettlementId(job, 'tuner-b')).toBe(jobSettlementId(job, 'tuner-a'));
    expect(jobSettlementId({ id: 'ftjob-1', metadata: null }, 'tuner-b')).toBe('tuner-b/ftjob-1');
  });
});

describe("a job's training price", () => {
  const at = (name: string, price?: number) => ({
    name,
    pricing: price === undefined ? undefined : { trainingPerMillionTokens: price },
  });
  const configured = [at('dear', 25), at('cheap', 1), at('free')];

  it("is the creating deployment's wherever the caller reads it", () => {
    expect(pricedTraining(configured, 'dear', [at('cheap', 1)])).toBe(25);
  });

  it('is the dearest the caller may read it through when its creator has no training price', () => {
    expect(pricedTraining(configured, 'free', [at('cheap', 1), at('dear', 25)])).toBe(25);
    expect(pricedTraining(configured, 'free', [at('free')])).toBeUndefined();
  });

  it('is the dearest the caller may read it through when its creator left the config', () => {
    expect(pricedTraining(configured, 'removed', [at('cheap', 1), at('dear', 25), at('free')])).toBe(25);
    expect(pricedTraining(configured, 'removed', [at('free')])).toBeUndefined();
  });

  it("is the dearest of the job's model when its creator is unknown", () => {
    const readable = [
      { ...at('other-model', 99), model: 'other' },
      { ...at('cheap', 1), model: 'big' },
      { ...at('dear', 25), model: 'big' },
    ];
    expect(pricedTraining(configured, undefined, readable, 'big')).toBe(25);
    expect(pricedTraining(configured, undefined, readable, 'gone-model')).toBe(99);
  });
});

describe("a job's charge is the provider's trained tokens, bounded only against corrupt reports", () => {
  const PRICE = 25;
  const job = (trained: number) => ({
    status: 'succeeded',
    trained_tokens: trained,
    metadata: { [OWNER_KEYS.tenant]: 't' },
  });

  it('charges an honest report above the hold in full (a vision file bills its images, not their text)', () => {
    // 1,000 text tokens × 1 epoch held; the provider bills 80,000 for the images: $2, not $0.025.
    expect(trainingHoldUsd(1_000, 1, PRICE)).toBeLessThan(0.03);
    expect(trainingCharge(job(80_000), PRICE)).toEqual({ trainedTokens: 80_000, costUsd: 2 });
  });

  it.each([3e12, 1e300])('cuts %d trained tokens at the sanity ceiling: a storable charge', (t) => {
    const c = trainingCharge(job(t), PRICE)!;
    expect(c.trainedTokens).toBe(MAX_TRAINED_TOKENS);
    expect(() => toMicros(c.costUsd)).not.toThrow();
  });
});
