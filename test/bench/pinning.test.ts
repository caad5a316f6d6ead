import { describe, expect, it } from 'vitest';
import { parseAffinityList, planFor } from './pinning.ts';

describe('cpu pinning', () => {
  it('reads taskset affinity lists with ranges', () => {
    expect(parseAffinityList("pid 12's current affinity list: 0-2,5\n")).toEqual([0, 1, 2, 5]);
    expect(parseAffinityList("pid 12's current affinity list: 3\n")).toEqual([3]);
  });

  it('gives the gateway the first core and everything else the rest', () => {
    expect(planFor([2, 3, 4], true)).toMatchObject({ pinned: true, gatewayCores: '2', otherCores: '3,4' });
    expect(planFor([0], true).pinned).toBe(false);
    expect(planFor([0, 1], false).description).toContain('taskset is not installed');
  });
});
