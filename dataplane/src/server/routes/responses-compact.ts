/**
 * The output of /v1/responses/compact, as OpenAI shapes it: every user message of the
 * conversation, then one compaction item standing for everything else (Gantry's is a summary
 * the model wrote; see formats/responses/compaction.ts).
 */
import type { ChatMessage, ContentPart } from '../../formats/openai/types.ts';

type InputContent = { type: 'input_text'; text: string } | { type: 'input_image'; image_url: string };

export function compactedOutput(
  id: string,
  conversation: readonly ChatMessage[],
  encrypted: string,
): Record<string, unknown>[] {
  const users = conversation
    .filter((m) => m.role === 'user')
    .map((m, i) => ({
      type: 'message',
      id: `msg_${id.replace(/^resp_/, '')}u${i}`,
      status: 'completed',
      role: 'user',
      content: contentOf(m.content),
    }));
  return [
    ...users,
    { type: 'compaction', id: `cmp_${id.replace(/^resp_/, '')}`, encrypted_content: encrypted },
  ];
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
