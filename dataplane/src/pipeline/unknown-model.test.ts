import { describe, expect, it } from 'vitest';
import type { Snapshot } from '../config/snapshot.ts';
import { isUnadmittedUnknownRefusal, recordedModel, UNKNOWN_MODEL } from './unknown-model.ts';

const snapshot = {
  models: new Map([['gpt-test', {}]]),
  leftOut: [{ model: 'claude-elsewhere' }],
} as unknown as Pick<Snapshot, 'models' | 'leftOut'>;

describe('recordedModel', () => {
  it('keeps configured names, served here or left out of this pod, and labels the rest', () => {
    expect(recordedModel(snapshot, 'gpt-test')).toBe('gpt-test');
    expect(recordedModel(snapshot, 'claude-elsewhere')).toBe('claude-elsewhere');
    expect(recordedModel(snapshot, 'gpt-tset')).toBe(UNKNOWN_MODEL);
    expect(recordedModel(snapshot, '')).toBe('');
  });
});

describe('isUnadmittedUnknownRefusal', () => {
  const ctx = (requestedModel: string | undefined, admitted = false) => ({
    snapshot: snapshot as Snapshot,
    usage: { requestedModel },
    admission: admitted ? { ticket: undefined, reservation: undefined } : undefined,
  });
  it('is the 404 of a made-up name before admission only', () => {
    expect(isUnadmittedUnknownRefusal(ctx('made-up'), { status: 404 })).toBe(true);
    expect(isUnadmittedUnknownRefusal(ctx('made-up'), { status: 400 })).toBe(false);
    expect(isUnadmittedUnknownRefusal(ctx('made-up', true), { status: 404 })).toBe(false);
    expect(isUnadmittedUnknownRefusal(ctx('gpt-test'), { status: 404 })).toBe(false);
    expect(isUnadmittedUnknownRefusal(ctx(undefined), { status: 404 })).toBe(false);
  });
  it('goes by the name the error refused, whatever the route noted', () => {
    expect(isUnadmittedUnknownRefusal(ctx(undefined), { status: 404, refusedModel: 'made-up' })).toBe(true);
    expect(isUnadmittedUnknownRefusal(ctx(''), { status: 404, refusedModel: 'made-up' })).toBe(true);
    expect(isUnadmittedUnknownRefusal(ctx('made-up'), { status: 404, refusedModel: 'gpt-test' })).toBe(false);
  });
});
