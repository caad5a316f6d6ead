/**
 * The facts a state must not lose, found without a model: file paths, identifiers, pending
 * requirements and unresolved errors. They are merged into whatever the extraction model
 * returns, so a model that forgets one cannot drop it from the conversation.
 */
import type { ChatMessage } from '../../formats/openai/types.ts';
import { messageText } from './text.ts';

export interface Facts {
  paths: string[];
  identifiers: string[];
  requirements: string[];
  errors: string[];
}

const PATH = /(?:^|[\s"'`(=:])((?:\.{0,2}\/)?(?:[\w@.-]+\/)+[\w@.-]+\.[A-Za-z0-9]{1,8})\b/g;
/** camelCase, snake_case, SCREAMING_CASE, Type.member, ticket ids, backticked names. */
const IDENT =
  /`([A-Za-z_$][\w$.:-]{2,80})`|\b([a-z]+(?:[A-Z][a-z0-9]+)+|[A-Za-z]+(?:_[A-Za-z0-9]+)+|[A-Z]{2,}-\d+|[A-Z][a-z]+[A-Z]\w+)\b/g;
const REQUIREMENT =
  /[^.!?\n]*\b(?:must|should|need to|needs to|has to|have to|make sure|ensure|required?|don't|do not|never|always)\b[^.!?\n]*[.!?]?/gi;
const ERROR_LINE =
  /^.*\b(?:error|exception|traceback|failed|fatal|panic|cannot|not found|denied|refused)\b.*$/gim;
const RESOLVED = /\b(?:fixed|resolved|solved|works now|passing|passes|succeeded|done)\b/i;

const MAX_EACH = 64;
const MAX_LINE = 200;

const clip = (s: string) => (s.length > MAX_LINE ? `${s.slice(0, MAX_LINE - 1)}…` : s);

function addAll(
  into: Set<string>,
  text: string,
  re: RegExp,
  pick: (m: RegExpExecArray) => string | undefined,
) {
  re.lastIndex = 0;
  for (let m = re.exec(text); m && into.size < MAX_EACH; m = re.exec(text)) {
    const v = pick(m)?.trim();
    if (v) into.add(clip(v));
  }
}

/**
 * Requirements come from user turns only (what was asked), errors from anywhere, and an
 * error counts as unresolved unless a later message reports it fixed.
 */
export function extractFacts(messages: readonly ChatMessage[]): Facts {
  const paths = new Set<string>();
  const identifiers = new Set<string>();
  const requirements = new Set<string>();
  const errors: { line: string; at: number }[] = [];
  let lastResolvedAt = -1;
  messages.forEach((m, at) => {
    const text = messageText(m);
    addAll(paths, text, PATH, (x) => x[1]);
    addAll(identifiers, text, IDENT, (x) => x[1] ?? x[2]);
    if (m.role === 'user') addAll(requirements, text, REQUIREMENT, (x) => x[0]);
    if (m.role !== 'user' && RESOLVED.test(text)) lastResolvedAt = at;
    ERROR_LINE.lastIndex = 0;
    for (let e = ERROR_LINE.exec(text); e && errors.length < MAX_EACH; e = ERROR_LINE.exec(text))
      errors.push({ line: clip(e[0].trim()), at });
  });
  for (const p of paths) identifiers.delete(p);
  return {
    paths: [...paths],
    identifiers: [...identifiers],
    requirements: [...requirements],
    errors: [...new Set(errors.filter((e) => e.at > lastResolvedAt).map((e) => e.line))],
  };
}
