/**
 * Canonical message list → Anthropic `system` + `messages`.
 *
 * Anthropic differs from OpenAI in four ways that matter here: the system prompt is a
 * top-level field; roles must alternate (so consecutive same-role turns are merged); tool
 * results are `tool_result` blocks inside a user turn, listed before any other block of
 * that turn; and a trailing assistant turn is a prefill the model continues, which must not
 * end in whitespace.
 */
import type { ChatMessage } from '../../formats/openai/types.ts';
import type {
  AnthropicContentBlockParam,
  AnthropicMessageParam,
  AnthropicTextBlock,
  AnthropicToolResultBlock,
  ThinkingBlocks,
} from '../../formats/anthropic/types.ts';
import { isRecord, toolInput, withCacheControl } from '../../formats/anthropic/util.ts';
import { contentToBlocks, textBlocks } from './content.ts';

export interface AnthropicConversation {
  system: AnthropicTextBlock[];
  messages: AnthropicMessageParam[];
  /** The request ends in an assistant prefill that was kept. */
  prefilled: boolean;
}

type Turn = { role: 'user' | 'assistant'; blocks: AnthropicContentBlockParam[] };

/**
 * Signed thinking blocks an Anthropic client sent back (see CanonicalExtensions). Unsigned
 * reasoning (from another provider, or a client that dropped the signature) is left out:
 * Anthropic rejects a thinking block whose signature it cannot verify.
 */
function thinkingBlocksOf(message: ChatMessage): ThinkingBlocks {
  const raw = message['thinking_blocks'];
  if (!Array.isArray(raw)) return [];
  const out: ThinkingBlocks = [];
  for (const block of raw as unknown[]) {
    if (!isRecord(block)) continue;
    if (
      block['type'] === 'thinking' &&
      typeof block['thinking'] === 'string' &&
      typeof block['signature'] === 'string' &&
      block['signature'] !== ''
    ) {
      out.push({ type: 'thinking', thinking: block['thinking'], signature: block['signature'] });
    } else if (block['type'] === 'redacted_thinking' && typeof block['data'] === 'string') {
      out.push({ type: 'redacted_thinking', data: block['data'] });
    }
  }
  return out;
}

function assistantBlocks(message: ChatMessage): AnthropicContentBlockParam[] {
  const blocks: AnthropicContentBlockParam[] = [...thinkingBlocksOf(message), ...textBlocks(message.content)];
  for (const call of message.tool_calls ?? []) {
    blocks.push({
      type: 'tool_use',
      id: call.id,
      name: call.function.name,
      input: toolInput(call.function.arguments),
    });
  }
  return blocks;
}

function toolResult(message: ChatMessage, where: string): AnthropicToolResultBlock {
  const content = contentToBlocks(message.content, `${where}.content`);
  const block: AnthropicToolResultBlock = { type: 'tool_result', tool_use_id: message.tool_call_id ?? '' };
  // A single plain text result is sent as a string, the form Anthropic documents first.
  const only = content[0];
  if (content.length === 1 && only?.type === 'text' && only.cache_control === undefined)
    block.content = only.text;
  else if (content.length > 0) block.content = content;
  if (message['is_error'] === true) block.is_error = true;
  return { ...block, ...withCacheControl(message) };
}

/** Merge adjacent same-role turns; inside a user turn, tool results go first (Anthropic rule). */
function mergeTurns(turns: Turn[]): Turn[] {
  const merged: Turn[] = [];
  for (const turn of turns) {
    const last = merged[merged.length - 1];
    if (last !== undefined && last.role === turn.role) last.blocks.push(...turn.blocks);
    else merged.push({ role: turn.role, blocks: [...turn.blocks] });
  }
  for (const turn of merged) {
    if (turn.role !== 'user') continue;
    const results = turn.blocks.filter((b) => b.type === 'tool_result');
    if (results.length > 0)
      turn.blocks = [...results, ...turn.blocks.filter((b) => b.type !== 'tool_result')];
  }
  return merged;
}

/**
 * A final assistant turn without tool calls is a prefill. Kept (whitespace-trimmed, since
 * Anthropic rejects trailing whitespace there) only when the deployment accepts prefill;
 * otherwise dropped, so the model answers the preceding user turn normally.
 */
function applyPrefill(turns: Turn[], prefillAllowed: boolean): boolean {
  const last = turns[turns.length - 1];
  if (last === undefined || last.role !== 'assistant' || last.blocks.some((b) => b.type === 'tool_use'))
    return false;
  if (!prefillAllowed) {
    turns.pop();
    return false;
  }
  while (last.blocks.length > 0) {
    const tail = last.blocks[last.blocks.length - 1];
    if (tail?.type !== 'text') break;
    const trimmed = tail.text.trimEnd();
    if (trimmed !== '') {
      last.blocks[last.blocks.length - 1] = { ...tail, text: trimmed };
      break;
    }
    last.blocks.pop();
  }
  if (last.blocks.length === 0) {
    turns.pop();
    return false;
  }
  return true;
}

/** A lone plain text block is sent as a string: shorter, and what clients themselves send. */
function toParam(turn: Turn): AnthropicMessageParam {
  const only = turn.blocks[0];
  const plain =
    turn.blocks.length === 1 && only?.type === 'text' && only.cache_control === undefined && !only.citations;
  return { role: turn.role, content: plain ? only.text : turn.blocks };
}

export function toAnthropicConversation(
  messages: ChatMessage[],
  prefillAllowed: boolean,
): AnthropicConversation {
  const system: AnthropicTextBlock[] = [];
  const turns: Turn[] = [];
  messages.forEach((message, i) => {
    const where = `messages[${i}]`;
    switch (message.role) {
      case 'system':
      case 'developer':
        // Anthropic has one system prompt; system turns anywhere in the list join it in order.
        system.push(...textBlocks(message.content));
        return;
      case 'user':
        turns.push({ role: 'user', blocks: contentToBlocks(message.content, `${where}.content`) });
        return;
      case 'assistant':
        turns.push({ role: 'assistant', blocks: assistantBlocks(message) });
        return;
      case 'tool':
        turns.push({ role: 'user', blocks: [toolResult(message, where)] });
        return;
    }
  });
  // Turns left empty (e.g. an assistant turn that only carried unsigned reasoning) are
  // rejected by Anthropic and carry nothing, so they go before merging.
  const merged = mergeTurns(turns.filter((t) => t.blocks.length > 0));
  const prefilled = applyPrefill(merged, prefillAllowed);
  return { system, messages: merged.map(toParam), prefilled };
}
