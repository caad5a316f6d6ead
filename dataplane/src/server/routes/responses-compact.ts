/**
 * The output of /v1/responses/compact, as OpenAI shapes it: the user messages of the
 * conversation, then one compaction item standing for everything else (Gantry's is a summary
 * the model wrote; see formats/responses/compaction.ts).
 *
 * Only the newest user messages that fit in `budgetBytes` (as JSON) are kept; the summary
 * covers the older ones. Compaction is the way out the chain bound names (chained-history.ts),
 * so its output must be something a client can send back: with every user message verbatim,
 * a conversation of long user turns compacted to more than one request body, a 413.
 */
import type { ChatMessage, ContentPart } from '../../formats/openai/types.ts';

type InputContent = { type: 'input_text'; text: string } | { type: 'input_image'; image_url: string };

export function compactedOutput(
  id: string,
  conversation: readonly ChatMessage[],
  encrypted: string,
  budgetBytes = Infinity,
): Record<string, unknown>[] {
  const tag = id.replace(/^resp_/, '');
  const users = conversation
    .filter((m) => m.role === 'user')
    .map((m, i) => ({
      type: 'message',
      id: `msg_${tag}u${i}`,
      status: 'completed',
      role: 'user',
      content: contentOf(m.content),
    }));
  // Newest first, stopping at the first that does not fit: what is kept is a contiguous tail.
  let first = users.length;
  let used = 0;
  while (first > 0) {
    const bytes = Buffer.byteLength(JSON.stringify(users[first - 1]), 'utf8') + 1;
    if (used + bytes > budgetBytes) break;
    used += bytes;
    first--;
  }
  return [...users.slice(first), { type: 'compaction', id: `cmp_${tag}`, encrypted_content: encrypted }];
}

function contentOf(content: ChatMessage['content']): InputContent[] {
  if (typeof content === 'string') return [{ type: 'input_text', text: content }];
  return (content ?? []).flatMap((p: ContentPart): InputContent[] => {
    if (p.type === 'text' && typeof p.text === 'string') return [{ type: 'input_text', text: p.text }];
    if (p.type === 'image_url' && typeof p.image_url === 'object' && p.image_url !== null)
      return [{ type: 'input_image', image_url: String((p.image_url as { url: unknown }).url) }];
    return [];
  });
}
