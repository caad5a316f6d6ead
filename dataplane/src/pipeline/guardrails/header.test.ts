import { describe, expect, it } from 'vitest';
import { parseGuardHeader } from './header.ts';

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
