import { describe, expect, it } from 'vitest';
import type { ChatMessage } from '../../formats/openai/types.ts';
import { agentTrace, codeSession, longChat } from './fixtures.ts';
import { hasCodePattern, profileConversation } from './profile.ts';

const msgs = (tools: number, code: number, plain: number): ChatMessage[] => [
  { role: 'system', content: 'not counted' },
  ...Array.from({ length: tools }, (): ChatMessage => ({ role: 'tool', tool_call_id: 'x', content: 'ok' })),
  ...Array.from({ length: code }, (): ChatMessage => ({ role: 'user', content: '```ts\nconst a = 1;\n```' })),
  ...Array.from({ length: plain }, (): ChatMessage => ({ role: 'user', content: 'just words here' })),
];

describe('profileConversation', () => {
  it('tool-agent strictly above 30 % tool messages (system messages not counted)', () => {
    expect(profileConversation(msgs(31, 0, 69)).profile).toBe('tool-agent');
    expect(profileConversation(msgs(30, 0, 70)).profile).toBe('chat');
  });

  it('code-agent strictly above 20 % code messages', () => {
    expect(profileConversation(msgs(0, 21, 79)).profile).toBe('code-agent');
    expect(profileConversation(msgs(0, 20, 80)).profile).toBe('chat');
  });

  it('tool share wins over code share', () => {
    expect(profileConversation(msgs(40, 40, 20)).profile).toBe('tool-agent');
  });

  it('an empty conversation is a chat', () => {
    expect(profileConversation([])).toEqual({ profile: 'chat', toolShare: 0, codeShare: 0 });
  });

  it('classifies the generated corpus kinds', () => {
    expect(profileConversation(agentTrace(1, 20).request.messages).profile).toBe('tool-agent');
    expect(profileConversation(codeSession(1, 10).request.messages).profile).toBe('code-agent');
    expect(profileConversation(longChat(1, 10).request.messages).profile).toBe('chat');
  });

  it('code patterns', () => {
    for (const code of ['```py\nx\n```', 'def main():', 'import os', 'return x;', 'foo(bar) {', 'x => x + 1'])
      expect(hasCodePattern(code)).toBe(true);
    for (const text of ['Hello, how are you?', 'The meeting is at 10:30 (room 4).'])
      expect(hasCodePattern(text)).toBe(false);
  });
});
