/**
 * Conversation profiling without a model call (SPEC.md's thresholds), and what each profile
 * tunes: how much room the extraction gets and how eagerly removed content is kept for
 * recovery.
 */
import type { ChatMessage } from '../../formats/openai/types.ts';
import { messageText } from './text.ts';
import type { Profile } from './types.ts';

export const TOOL_AGENT_SHARE = 0.3;
export const CODE_AGENT_SHARE = 0.2;

/** Fences, declarations, imports, call chains and the punctuation code is made of. */
const CODE_PATTERN =
  /```|^\s*(?:def|class|function|fn|func|import|from|export|const|let|var|public|private|package|#include)\b|[;{}]\s*$|=>|\w+\([^)]*\)\s*[{:;]/m;

export function hasCodePattern(text: string): boolean {
  return CODE_PATTERN.test(text);
}

export interface ProfileResult {
  profile: Profile;
  toolShare: number;
  codeShare: number;
}

/** Tool share first: an agent that reads code through tools is a tool agent. */
export function profileConversation(messages: readonly ChatMessage[]): ProfileResult {
  const counted = messages.filter((m) => m.role !== 'system' && m.role !== 'developer');
  if (counted.length === 0) return { profile: 'chat', toolShare: 0, codeShare: 0 };
  let tools = 0;
  let code = 0;
  for (const m of counted) {
    if (m.role === 'tool') tools++;
    if (hasCodePattern(messageText(m))) code++;
  }
  const toolShare = tools / counted.length;
  const codeShare = code / counted.length;
  const profile: Profile =
    toolShare > TOOL_AGENT_SHARE ? 'tool-agent' : codeShare > CODE_AGENT_SHARE ? 'code-agent' : 'chat';
  return { profile, toolShare, codeShare };
}

export interface ProfileTuning {
  /** Tokens the extraction model may answer with (the state's size). */
  stateBudgetTokens: number;
  /** Tokens of history the extraction prompt may carry; beyond, low-importance messages are cut. */
  extractionInputTokens: number;
  /** Smallest removed message kept for context recovery. */
  recoverMinChars: number;
  /** Whether removed user/assistant messages with code are kept for recovery too (tool output always is). */
  recoverCode: boolean;
}

export const TUNING: Readonly<Record<Profile, ProfileTuning>> = {
  'tool-agent': {
    stateBudgetTokens: 1500,
    extractionInputTokens: 48_000,
    recoverMinChars: 120,
    recoverCode: true,
  },
  'code-agent': {
    stateBudgetTokens: 2000,
    extractionInputTokens: 64_000,
    recoverMinChars: 200,
    recoverCode: true,
  },
  chat: { stateBudgetTokens: 1000, extractionInputTokens: 32_000, recoverMinChars: 400, recoverCode: false },
};
