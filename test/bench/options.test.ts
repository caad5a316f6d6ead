import { describe, expect, it } from 'vitest';
import { readFloors, readOptions, sectionList, sectionNumber } from './options.ts';

describe('section settings', () => {
  it('falls back when unset or empty', () => {
    expect(sectionNumber({}, 'X', 3, 'seconds')).toBe(3);
    expect(sectionNumber({ X: '' }, 'X', 7, 'count')).toBe(7);
    expect(sectionList({ X: ' , ' }, 'X', ['a'])).toEqual(['a']);
  });

  it('reads seconds as positive numbers and counts as whole numbers', () => {
    expect(sectionNumber({ X: '0.25' }, 'X', 3, 'seconds')).toBe(0.25);
    expect(sectionNumber({ X: '12' }, 'X', 3, 'count')).toBe(12);
    expect(() => sectionNumber({ X: '0' }, 'X', 3, 'seconds')).toThrow(/X must be a positive number/);
    expect(() => sectionNumber({ X: '1.5' }, 'X', 3, 'count')).toThrow(/whole number/);
    expect(() => sectionNumber({ X: 'many' }, 'X', 3, 'count')).toThrow(/"many"/);
  });

  it('splits lists on commas', () => {
    expect(sectionList({ X: 'redis, memory' }, 'X', [])).toEqual(['redis', 'memory']);
  });

  it('measures both floors unless BENCH_FLOOR names fewer', () => {
    expect(readOptions({}).floors).toEqual(['node', 'nginx']);
    expect(readFloors('1')).toEqual(['node', 'nginx']);
    expect(readFloors('0')).toEqual([]);
    expect(readFloors('nginx')).toEqual(['nginx']);
    expect(readFloors(' nginx , node ')).toEqual(['node', 'nginx']);
    expect(() => readFloors('node,apache')).toThrow(/BENCH_FLOOR names apache/);
  });
});
