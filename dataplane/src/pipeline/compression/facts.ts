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

/** Bounded repetitions: a base64 blob in a tool output must not make the scan quadratic. */
const PATH = /(?:^|[\s"'`(=:])((?:\.{0,2}\/)?(?:[\w@.-]{1,64}\/){1,12}[\w@.-]{1,64}\.[A-Za-z0-9]{1,8})\b/g;
/** camelCase, snake_case, SCREAMING_CASE, Type.member, ticket ids, backticked names. */
const IDENT =
  /`([A-Za-z_$][\w$.:-]{2,80})`|\b([a-z]{1,40}(?:[A-Z][a-z0-9]{1,40}){1,8}|[A-Za-z]{1,40}(?:_[A-Za-z0-9]{1,40}){1,8}|[A-Z]{2,10}-\d{1,8}|[A-Z][a-z]{1,40}[A-Z]\w{1,60})\b/g;
/** Tested per sentence, like errors per line, so cost stays linear in the text. */
const REQUIREMENT =
  /\b(?:must|should|need to|needs to|has to|have to|make sure|ensure|required?|don't|do not|never|always)\b/i;
const SENTENCE = /(?<=[.!?])\s+|\n/;
/** Tested per line (no `^.*…` scan: a long line must not cost quadratic time). */
const ERROR_WORD =
  /(?:error|exception)\b|\b(?:traceback|failed|fatal|panic|cannot|not found|denied|refused)\b/i;
const RESOLVED = /\b(?:fixed|resolved|solved|works now|passing|passes|succeeded|done)\b/i;

/** Bounds per kind; identifiers only seen inside tool output (recoverable by CCR) get fewer. */
const MAX_EACH = 512;
const MAX_TOOL_IDENTIFIERS = 64;
const MAX_LINE = 200;

const clip = (s: string) => (s.length > MAX_LINE ? `${s.slice(0, MAX_LINE - 1)}…` : s);

function addAll(
  into: Set<string>,
  text: string,
  re: RegExp,
  pick: (m: RegExpExecArray) => string | undefined,
  max = MAX_EACH,
) {
  re.lastIndex = 0;
  for (let m = re.exec(text); m && into.size < max; m = re.exec(text)) {
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
  const fromTools = new Set<string>();
  const requirements = new Set<string>();
  const errors: { line: string; at: number }[] = [];
  let lastResolvedAt = -1;
  messages.forEach((m, at) => {
    const text = messageText(m);
    addAll(paths, text, PATH, (x) => x[1]);
    // Names said in prose matter most; names inside code (tool output, fenced blocks) are
    // many, and the code itself is kept for recovery.
    const pick = (x: RegExpExecArray) => x[1] ?? x[2];
    if (m.role === 'tool') addAll(fromTools, text, IDENT, pick, MAX_TOOL_IDENTIFIERS);
    else {
      const parts = text.split('```');
      parts.forEach((part, k) =>
        k % 2 === 1
          ? addAll(fromTools, part, IDENT, pick, MAX_TOOL_IDENTIFIERS)
          : addAll(identifiers, part, IDENT, pick),
      );
    }
    if (m.role === 'user' && REQUIREMENT.test(text))
      for (const sentence of text.split(SENTENCE))
        if (requirements.size < MAX_EACH && REQUIREMENT.test(sentence))
          requirements.add(clip(sentence.trim()));
    if (m.role !== 'user' && RESOLVED.test(text)) lastResolvedAt = at;
    if (!ERROR_WORD.test(text)) return;
    // The newest errors matter most: keep the last ones seen.
    for (const line of text.split('\n')) {
      if (!ERROR_WORD.test(line)) continue;
      errors.push({ line: clip(line.trim()), at });
      if (errors.length > 4 * MAX_EACH) errors.shift();
    }
  });
  for (const id of fromTools) if (identifiers.size < MAX_EACH) identifiers.add(id);
  for (const p of paths) identifiers.delete(p);
  return {
    paths: [...paths],
    identifiers: [...identifiers],
    requirements: [...requirements],
    errors: [...new Set(errors.filter((e) => e.at > lastResolvedAt).map((e) => e.line))].slice(-MAX_EACH),
  };
}
