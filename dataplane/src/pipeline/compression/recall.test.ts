import { describe, expect, it } from 'vitest';
import type { ChatMessage } from '../../formats/openai/types.ts';
import type { CcrIndexEntry } from './ccr/types.ts';
import { CCR_DECAY_TURNS } from './ccr/limits.ts';
import { TUNING } from './profile.ts';
import { contentId, entriesToFile, keywordsOf, labelNames, planRecall } from './recall.ts';

const entry = (id: string, label: string, keywords: string[], mentionedTurn?: number): CcrIndexEntry => ({
  id,
  label,
  keywords,
  storedAt: 0,
  mentionedTurn,
});

describe('keywords and label names', () => {
  it('keywords are distinctive words, paths kept whole', () => {
    const k = keywordsOf('The parseConfig function reads src/config/load.ts with the loader');
    expect(k).toEqual(expect.arrayContaining(['parseconfig', 'src/config/load.ts', 'loader', 'reads']));
    expect(k).not.toContain('function');
    expect(k).not.toContain('the');
    expect(k).not.toContain('with');
  });

  it('label names are paths and file names, not tool names or filter words', () => {
    expect(labelNames('read_file {"path":"src/billing/ledger.ts"}')).toEqual([
      'src/billing/ledger.ts',
      'ledger.ts',
    ]);
    expect(labelNames('run_tests {"filter":"billing"}')).toEqual([]);
  });
});

describe('entriesToFile', () => {
  const msgs: ChatMessage[] = [
    { role: 'user', content: 'task' },
    {
      role: 'assistant',
      content: null,
      tool_calls: [
        { id: 'c1', type: 'function', function: { name: 'read_file', arguments: '{"path":"src/a.ts"}' } },
      ],
    },
    { role: 'tool', tool_call_id: 'c1', content: 'export const a = 1;\n'.repeat(20) },
    { role: 'tool', tool_call_id: 'c2', content: 'tiny' },
    { role: 'user', content: '```ts\n' + 'let x = 1;\n'.repeat(40) + '```' },
  ];

  it('files tool output verbatim, labelled with its call, keyed by content hash', () => {
    const out = entriesToFile(msgs, [0, 1, 2, 3, 4], TUNING['tool-agent'], 1000);
    const tool = out.find((e) => e.label.startsWith('read_file'));
    expect(tool).toMatchObject({ label: 'read_file {"path":"src/a.ts"}', storedAt: 1000 });
    expect(tool?.content).toBe(msgs[2]!.content);
    expect(tool?.id).toBe(contentId(String(msgs[2]!.content)));
    expect(out.some((e) => e.content === 'tiny')).toBe(false); // below the profile's minimum
    expect(out.some((e) => e.label === 'user message 4')).toBe(true); // code kept for tool/code profiles
  });

  it('chat profile keeps tool output but not code messages', () => {
    const out = entriesToFile(msgs, [0, 1, 2, 3, 4], TUNING.chat, 0);
    expect(out.map((e) => e.label)).toEqual(['read_file {"path":"src/a.ts"}']);
  });
});

describe('planRecall', () => {
  const files = [
    entry('a', 'read_file {"path":"src/users/service.ts"}', ['userservice', 'finduser', 'select', 'limit']),
    entry('b', 'read_file {"path":"src/billing/ledger.ts"}', ['ledger', 'postentry', 'select', 'limit']),
    entry('c', 'run_tests {"filter":"users"}', [
      'typeerror',
      'finduser',
      'userservice',
      'undefined',
      'select',
    ]),
    entry('d', 'read_file {"path":"src/x/y.ts"}', ['select', 'limit', 'checked']),
    entry('e', 'read_file {"path":"src/z/w.ts"}', ['select', 'limit', 'checked']),
  ];

  it('a path named again comes back first; nothing else is mentioned', () => {
    const p = planRecall(files, 3, 'Please open src/billing/ledger.ts again', new Set());
    expect(p).toEqual({ inject: ['b'], mentioned: ['b'] });
  });

  it('enough shared distinctive words bring an entry back; words every entry has do not', () => {
    const p = planRecall(files, 3, 'Why does findUser throw a TypeError in UserService?', new Set());
    expect(p.inject).toEqual(['c']);
    const q = planRecall(files, 3, 'select limit checked', new Set());
    expect(q.inject).toEqual([]);
  });

  it('content the request still carries is not injected twice, but counts as mentioned', () => {
    const p = planRecall(files, 3, 'src/billing/ledger.ts', new Set(['b']));
    expect(p).toEqual({ inject: [], mentioned: ['b'] });
  });

  it(`working set: injected until ${CCR_DECAY_TURNS} turns pass without a mention`, () => {
    const mentionedAt = [entry('a', 'read_file {"path":"src/users/service.ts"}', ['x'], 10)];
    for (let turn = 10; turn < 10 + CCR_DECAY_TURNS; turn++)
      expect(planRecall(mentionedAt, turn, 'unrelated', new Set()).inject).toEqual(['a']);
    expect(planRecall(mentionedAt, 10 + CCR_DECAY_TURNS, 'unrelated', new Set()).inject).toEqual([]);
  });
});
