/**
 * Context recovery decisions, pure: which removed messages are filed (tool output, files
 * read, code), the keywords that identify them, and which filed entries come back this turn.
 * An entry comes back when the kept conversation (Recent and Last) mentions it — its label's
 * names or enough of its distinctive words — and stays in the working set until it has gone
 * CCR_DECAY_TURNS turns without a mention.
 */
import { createHash } from 'node:crypto';
import type { ChatMessage } from '../../formats/openai/types.ts';
import { CCR_DECAY_TURNS } from './ccr/limits.ts';
import type { CcrEntry, CcrIndexEntry } from './ccr/types.ts';
import { hasCodePattern, type ProfileTuning } from './profile.ts';
import { messageText } from './text.ts';

const MAX_KEYWORDS = 24;
/** Distinctive words an entry must share with the kept conversation, absent a label match. */
export const MIN_SHARED_KEYWORDS = 3;

const STOP = new Set(
  'about above after again against because been before being below between could does doing during each from further have having here into itself more most other over same should some such than that their them then there these they this those through under until very what when where which while will with would your yours return const function string number true false null undefined import export'.split(
    ' ',
  ),
);

/** Bounded so a long run without a slash costs linear time. */
const WORD = /[\w.-]{0,64}\/[\w./-]{0,190}\w|[A-Za-z_][\w.-]{0,62}\w/g;

/** Lower-cased distinctive words: paths, identifiers, words of 5+ letters that are not stop words. */
export function keywordsOf(text: string, limit = MAX_KEYWORDS): string[] {
  const counts = new Map<string, number>();
  WORD.lastIndex = 0;
  for (let m = WORD.exec(text); m; m = WORD.exec(text)) {
    const w = m[0].toLowerCase();
    if (w.length < 5 || STOP.has(w)) continue;
    counts.set(w, (counts.get(w) ?? 0) + 1);
  }
  // Rarer words identify better; prefer long ones among equals.
  return [...counts.entries()]
    .sort((a, b) => a[1] - b[1] || b[0].length - a[0].length || (a[0] < b[0] ? -1 : 1))
    .slice(0, limit)
    .map(([w]) => w);
}

/**
 * Names in a label that identify the entry on their own: paths and file names (a tool's
 * name or a filter word like `billing` names many entries, not this one).
 */
export function labelNames(label: string): string[] {
  const names = new Set<string>();
  for (const w of label.match(WORD) ?? []) {
    const lower = w.toLowerCase();
    if (!lower.includes('/') && !/\.[a-z0-9]{1,8}$/.test(lower)) continue;
    names.add(lower);
    const base = lower.split('/').at(-1);
    if (base && base !== lower && base.length >= 6) names.add(base);
  }
  return [...names];
}

const contentId = (content: string) => createHash('sha256').update(content).digest('hex');

/** A label's length: enough for a tool's name and the path or query it was given. */
export const LABEL_CHARS = 300;

/**
 * A copy that shares no memory with `s`. V8 keeps a slice or regex match of a string as a
 * view of its parent, so a 300-character label cut from 8 MiB of tool-call arguments (or
 * a keyword matched in a whole file) would keep those megabytes alive for as long as the
 * entry is filed, unseen by the store's character bound. Only for short strings.
 */
export const detached = (s: string): string => Buffer.from(s, 'utf16le').toString('utf16le');

/** The calls by id, so a tool message is labelled with what produced it (arguments cut first). */
function callsById(messages: readonly ChatMessage[]): Map<string, string> {
  const out = new Map<string, string>();
  for (const m of messages)
    for (const c of m.tool_calls ?? [])
      out.set(c.id, `${c.function.name} ${c.function.arguments.slice(0, LABEL_CHARS)}`);
  return out;
}

/**
 * What compression removes and recovery keeps: every tool message of History long enough
 * to matter, and for code-heavy profiles, user/assistant messages carrying code.
 */
export function entriesToFile(
  messages: readonly ChatMessage[],
  history: readonly number[],
  tuning: ProfileTuning,
  now: number,
): Omit<CcrEntry, 'mentionedTurn'>[] {
  const calls = callsById(messages);
  const out = new Map<string, Omit<CcrEntry, 'mentionedTurn'>>();
  for (const i of history) {
    const m = messages[i]!;
    const content = messageText(m);
    if (content.length < tuning.recoverMinChars) continue;
    let label: string;
    if (m.role === 'tool') label = calls.get(m.tool_call_id ?? '') ?? `tool ${m.tool_call_id ?? ''}`;
    else if (tuning.recoverCode && (m.role === 'user' || m.role === 'assistant') && hasCodePattern(content))
      label = `${m.role} message ${i}`;
    else continue;
    const id = contentId(content);
    label = detached(label.slice(0, LABEL_CHARS));
    out.set(id, {
      id,
      label,
      keywords: keywordsOf(`${label}\n${content}`).map(detached),
      content,
      storedAt: now,
    });
  }
  return [...out.values()];
}

/** How strongly the kept text refers to an entry: by a name in its label, by shared words, or not. */
export type Mention = 'label' | 'keywords' | undefined;

/**
 * `rare`: the keywords distinctive among the scope's entries (in at most a fifth of them, or two);
 * words every file shares (`select`, `limit`) say nothing about which one is meant.
 */
export function mentionOf(
  entry: Pick<CcrIndexEntry, 'label' | 'keywords'>,
  keptLower: string,
  kept: ReadonlySet<string>,
  rare: (keyword: string) => boolean,
): Mention {
  if (labelNames(entry.label).some((n) => n.length >= 6 && keptLower.includes(n))) return 'label';
  let shared = 0;
  for (const k of entry.keywords)
    if (rare(k) && kept.has(k) && ++shared >= MIN_SHARED_KEYWORDS) return 'keywords';
  return undefined;
}

export interface RecallPlan {
  /** Entries to re-inject, most wanted first: named now, then sharing words now, then still in the working set. */
  inject: string[];
  /** Entries mentioned this turn (their decay restarts). */
  mentioned: string[];
}

/**
 * Re-inject what is mentioned now or still in the working set (mentioned within the last
 * CCR_DECAY_TURNS − 1 turns), except content the outgoing request already carries verbatim.
 */
export function planRecall(
  entries: readonly CcrIndexEntry[],
  turn: number,
  keptText: string,
  carried: ReadonlySet<string>,
): RecallPlan {
  const keptLower = keptText.toLowerCase();
  const kept = new Set(keywordsOf(keptText, Infinity));
  const df = new Map<string, number>();
  for (const e of entries) for (const k of new Set(e.keywords)) df.set(k, (df.get(k) ?? 0) + 1);
  const rareLimit = Math.max(2, Math.floor(entries.length / 5));
  const rare = (k: string) => (df.get(k) ?? 0) <= rareLimit;
  const byLabel: string[] = [];
  const byWords: string[] = [];
  const working: string[] = [];
  const mentioned: string[] = [];
  for (const e of [...entries].reverse()) {
    const m = mentionOf(e, keptLower, kept, rare);
    if (m) mentioned.push(e.id);
    if (carried.has(e.id)) continue;
    if (m === 'label') byLabel.push(e.id);
    else if (m === 'keywords') byWords.push(e.id);
    else if (e.mentionedTurn !== undefined && turn - e.mentionedTurn < CCR_DECAY_TURNS) working.push(e.id);
  }
  return { inject: [...byLabel, ...byWords, ...working], mentioned };
}

export { contentId };
