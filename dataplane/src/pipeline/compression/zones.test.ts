import { describe, expect, it } from 'vitest';
import type { ChatMessage } from '../../formats/openai/types.ts';
import { assemble } from './decide.ts';
import { agentTrace } from './fixtures.ts';
import { pairingIntact, splitSteps, zone } from './zones.ts';

const sys = (content = 's'): ChatMessage => ({ role: 'system', content });
const user = (content = 'u'): ChatMessage => ({ role: 'user', content });
const asst = (content = 'a', calls: string[] = []): ChatMessage => ({
  role: 'assistant',
  content,
  ...(calls.length > 0 && {
    tool_calls: calls.map((id) => ({
      id,
      type: 'function' as const,
      function: { name: 'f', arguments: '{}' },
    })),
  }),
});
const tool = (id: string): ChatMessage => ({ role: 'tool', tool_call_id: id, content: `result ${id}` });
const all = (ms: ChatMessage[]) => ms.map((_, i) => i);

describe('splitSteps', () => {
  it('chat: an assistant message and the tool messages answering it are one step', () => {
    const ms = [user(), asst('a', ['1', '2']), tool('1'), tool('2'), asst('b', ['3']), tool('3'), asst('c')];
    expect(splitSteps(ms, all(ms), 'chat')).toEqual([[0, 1, 2, 3], [4, 5], [6]]);
  });

  it('chat: a user turn starts the next step, carried with the assistant that answers it', () => {
    const ms = [user('q1'), asst('a1'), user('q2'), asst('a2')];
    expect(splitSteps(ms, all(ms), 'chat')).toEqual([
      [0, 1],
      [2, 3],
    ]);
  });

  it('chat: a step is not cut while calls of its assistant are still unanswered', () => {
    const ms = [asst('a', ['1', '2']), tool('1'), user('interjection'), tool('2'), asst('b')];
    expect(splitSteps(ms, all(ms), 'chat')).toEqual([[0, 1, 2, 3], [4]]);
  });

  it('messages: every tool result after an assistant turn stays with it, matched or not', () => {
    const ms = [user(), asst('a', ['1']), tool('1'), tool('x'), asst('b')];
    expect(splitSteps(ms, all(ms), 'messages')).toEqual([[0, 1, 2, 3], [4]]);
  });
});

describe('zone', () => {
  it('System is every system message, Last the final user message, Recent the last N assistant steps', () => {
    const ms = [sys(), user('q1'), asst('a1'), user('q2'), asst('a2'), user('q3'), asst('a3'), user('last')];
    expect(zone(ms, 2, 'chat')).toEqual({ system: [0], history: [1, 2], recent: [3, 4, 5, 6], last: [7] });
  });

  it('no Last when the conversation ends on a tool result (the agent loop)', () => {
    const ms = [user('q'), asst('a', ['1']), tool('1'), asst('b', ['2']), tool('2')];
    expect(zone(ms, 1, 'chat')).toEqual({ system: [], history: [0, 1, 2], recent: [3, 4], last: [] });
  });

  it('a window of 0 keeps no step verbatim; one larger than the conversation keeps them all', () => {
    const ms = [user('q1'), asst('a1'), user('q2')];
    expect(zone(ms, 0, 'chat').history).toEqual([0, 1]);
    expect(zone(ms, 10, 'chat').history).toEqual([]);
  });
});

describe('pairingIntact', () => {
  it('accepts answered calls and rejects a tool result away from its call', () => {
    expect(pairingIntact([user(), asst('a', ['1']), tool('1'), asst('b')])).toBe(true);
    expect(pairingIntact([user(), tool('1')])).toBe(false);
    expect(pairingIntact([asst('a', ['1']), user(), tool('1')])).toBe(false);
    expect(pairingIntact([asst('a', ['1']), tool('2')])).toBe(false);
  });
});

/** Random agent conversations: parallel calls, user interjections, system turns. */
function randomConversation(seed: number): ChatMessage[] {
  let s = seed;
  const r = () => (s = (Math.imul(s, 1103515245) + 12345) >>> 0) / 2 ** 32;
  const ms: ChatMessage[] = [sys(), user('task')];
  let n = 0;
  const steps = 1 + Math.floor(r() * 20);
  for (let i = 0; i < steps; i++) {
    const k = Math.floor(r() * 3);
    const ids = Array.from({ length: k }, () => `c${n++}`);
    ms.push(asst(`step ${i}`, ids));
    for (const id of ids) ms.push(tool(id));
    if (r() < 0.25) ms.push(user(`note ${i}`));
    if (r() < 0.05) ms.push(sys('mid'));
  }
  if (r() < 0.7) ms.push(user('last'));
  return ms;
}

describe('property: compression never separates a tool result from its call', () => {
  it.each(['chat', 'messages'] as const)('%s format, 500 random conversations and every window', (format) => {
    for (let seed = 1; seed <= 500; seed++) {
      const ms = randomConversation(seed);
      expect(pairingIntact(ms)).toBe(true);
      for (const window of [0, 1, 2, 4]) {
        const z = zone(ms, window, format);
        // Zones partition the conversation.
        expect([...z.system, ...z.history, ...z.recent, ...z.last].sort((a, b) => a - b)).toEqual(all(ms));
        const out = assemble(ms, z, [user('[state]')]);
        expect(pairingIntact(out)).toBe(true);
      }
    }
  });

  it('holds for the generated agent traces', () => {
    for (let seed = 1; seed <= 20; seed++) {
      const ms = agentTrace(seed, 5 + seed).request.messages;
      const out = assemble(ms, zone(ms, 3, 'chat'), [user('[state]')]);
      expect(pairingIntact(out)).toBe(true);
    }
  });
});
