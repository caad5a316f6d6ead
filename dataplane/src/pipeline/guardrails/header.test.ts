import { describe, expect, it } from 'vitest';
import { parseGuardHeader, skippedChecks } from './header.ts';

describe('parseGuardHeader', () => {
  it('defaults to all checks', () => {
    expect(parseGuardHeader(undefined)).toEqual({ kind: 'all' });
    expect(parseGuardHeader('  ')).toEqual({ kind: 'all' });
  });
  it('turns everything off with none, any case', () => {
    expect(parseGuardHeader('none')).toEqual({ kind: 'none' });
    expect(parseGuardHeader(' NONE ')).toEqual({ kind: 'none' });
  });
  it('parses a comma list', () => {
    expect(parseGuardHeader('prompt-injection, toxicity')).toEqual({
      kind: 'only',
      names: new Set(['prompt-injection', 'toxicity']),
    });
    expect(parseGuardHeader('pii,,secrets,')).toEqual({ kind: 'only', names: new Set(['pii', 'secrets']) });
  });
  it('names the first unknown entry', () => {
    expect(parseGuardHeader('pii,profanity')).toEqual({ kind: 'invalid', name: 'profanity' });
    expect(parseGuardHeader('none,pii')).toEqual({ kind: 'invalid', name: 'none' });
    expect(parseGuardHeader(',')).toEqual({ kind: 'invalid', name: ',' });
  });
});

describe('skippedChecks', () => {
  const active = ['prompt-injection', 'pii', 'secrets'] as const;
  it('all, and an invalid header, skip nothing', () => {
    expect(skippedChecks(parseGuardHeader(undefined), active)).toEqual([]);
    expect(skippedChecks(parseGuardHeader('all'), active)).toEqual([]);
    expect(skippedChecks(parseGuardHeader('bogus'), active)).toEqual([]);
  });
  it('none skips every active check', () => {
    expect(skippedChecks(parseGuardHeader('none'), active)).toEqual([...active]);
  });
  it('a list skips the active checks it leaves out, and naming an inactive one changes nothing', () => {
    expect(skippedChecks(parseGuardHeader('pii'), active)).toEqual(['prompt-injection', 'secrets']);
    expect(skippedChecks(parseGuardHeader('secrets,pii,prompt-injection'), active)).toEqual([]);
    expect(skippedChecks(parseGuardHeader('secrets,pii,prompt-injection,toxicity'), active)).toEqual([]);
  });
});
