import { describe, expect, it } from 'vitest';
import type { DifficultyLevel } from './classify.ts';
import { decideRoute, type RouteInput, type RoutingLevels } from './policy.ts';

const levels: RoutingLevels = {
  trivial: { model: 'gpt-4o-mini', reasoningEffort: 'low' },
  standard: { model: 'gpt-4o-mini' },
  complex: { model: 'o3', reasoningEffort: 'high' },
};
const allowAll = () => true;
const base: RouteInput = {
  level: 'complex',
  requestedModel: 'gpt-4o',
  allowedModels: allowAll,
  levels,
  enabled: true,
  optOut: false,
};

describe('decideRoute', () => {
  it('routes each level to its model and effort', () => {
    expect(decideRoute({ ...base, level: 'trivial' })).toMatchObject({
      level: 'trivial',
      model: 'gpt-4o-mini',
      effort: 'low',
      applied: true,
    });
    expect(decideRoute({ ...base, level: 'complex' })).toMatchObject({
      model: 'o3',
      effort: 'high',
      applied: true,
    });
  });

  it('leaves effort unset when the level names none', () => {
    const d = decideRoute({ ...base, level: 'standard' });
    expect(d).toMatchObject({ model: 'gpt-4o-mini', applied: true });
    expect(d).not.toHaveProperty('effort');
  });

  it('applies when the level model is the requested one', () => {
    const d = decideRoute({ ...base, requestedModel: 'o3' });
    expect(d).toMatchObject({ model: 'o3', effort: 'high', applied: true });
    expect(d.reason).toMatch(/keeps o3/);
  });

  it('keeps the requested model when the key may not use the level model', () => {
    const d = decideRoute({ ...base, allowedModels: (m) => m !== 'o3' });
    expect(d).toEqual({
      level: 'complex',
      model: 'gpt-4o',
      applied: false,
      reason: 'level complex model o3 is not allowed for this key',
    });
  });

  it('asks the allow list about the level model only', () => {
    const asked: string[] = [];
    decideRoute({ ...base, allowedModels: (m) => (asked.push(m), true) });
    expect(asked).toEqual(['o3']);
  });

  // Every combination of the switches: only enabled, not opted out, configured and allowed applies.
  const grid: [enabled: boolean, optOut: boolean, configured: boolean, allowed: boolean][] = [];
  for (const enabled of [true, false])
    for (const optOut of [true, false])
      for (const configured of [true, false])
        for (const allowed of [true, false]) grid.push([enabled, optOut, configured, allowed]);

  it.each(grid)('enabled=%s optOut=%s configured=%s allowed=%s', (enabled, optOut, configured, allowed) => {
    for (const level of ['trivial', 'standard', 'complex'] as DifficultyLevel[]) {
      const d = decideRoute({
        ...base,
        level,
        enabled,
        optOut,
        allowedModels: () => allowed,
        levels: configured ? levels : {},
      });
      const applies = enabled && !optOut && configured && allowed;
      expect(d.applied).toBe(applies);
      expect(d.level).toBe(level);
      expect(d.model).toBe(applies ? levels[level]?.model : 'gpt-4o');
      if (!applies) expect(d).not.toHaveProperty('effort');
      const expected = !enabled
        ? 'routing disabled for the tenant'
        : optOut
          ? 'client opted out of routing'
          : !configured
            ? `no model configured for level ${level}`
            : !allowed
              ? /not allowed for this key/
              : /^level /;
      expect(d.reason).toMatch(expected);
    }
  });

  it('treats missing levels like an unconfigured level', () => {
    const { levels: _omit, ...noLevels } = base;
    expect(decideRoute(noLevels)).toMatchObject({
      applied: false,
      model: 'gpt-4o',
      reason: 'no model configured for level complex',
    });
    expect(decideRoute({ ...base, levels: { trivial: levels.trivial! } })).toMatchObject({ applied: false });
  });
});
