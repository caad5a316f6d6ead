/**
 * The output of /v1/responses/compact, as OpenAI shapes it: the user messages of the
 * conversation, then one compaction item standing for everything else (Gantry's is a summary
 * the model wrote; see formats/responses/compaction.ts).
 *
 * Only the newest user messages that fit in `budgetBytes` with the compaction item are kept;
 * the summary covers the older ones. Compaction is the way out the chain bound names
 * (chained-history.ts), so its output must be something a client can send back: with every
 * user message verbatim, a conversation of long user turns compacted to more than one request
 * body, a 413. Sizes are the JSON's worst case as a client may send it back: clients that
 * escape non-ASCII (Python's json.dumps by default) send 6 bytes per UTF-16 unit, where UTF-8
 * takes at most 3 (an emoji: 12 bytes, not 4).
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
  const compaction = { type: 'compaction', id: `cmp_${tag}`, encrypted_content: encrypted };
  // Newest first, stopping at the first that does not fit: what is kept is a contiguous tail.
  let first = users.length;
  let used = sentJsonBytes(compaction);
  while (first > 0) {
    const bytes = sentJsonBytes(users[first - 1]) + 1;
    if (used + bytes > budgetBytes) break;
    used += bytes;
    first--;
  }
  return [...users.slice(first), compaction];
}

/** The most bytes `value` takes as JSON however a client encodes it: UTF-8 or \u-escaped. */
export function sentJsonBytes(value: unknown): number {
  const json = JSON.stringify(value);
  let nonAscii = 0;
  for (let i = 0; i < json.length; i++) if (json.charCodeAt(i) > 0x7f) nonAscii++;
  // Each such UTF-16 unit is one character of `json` and six bytes escaped (\uXXXX).
  return json.length + 5 * nonAscii;
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
