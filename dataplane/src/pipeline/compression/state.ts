/**
 * SPEC.md's extracted state: its schema (TypeBox, checked with the compiled validator), the
 * parse of a model's answer, the merge of the facts found without a model, and the one
 * message that replaces History.
 */
import { Type, type Static } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import type { ChatMessage } from '../../formats/openai/types.ts';
import type { Facts } from './facts.ts';

const StrMap = Type.Record(Type.String(), Type.String());

export const ActiveConstraints = Type.Object({
  identifiers: StrMap,
  values: StrMap,
  actions_taken: Type.Array(
    Type.Object({
      tool: Type.String(),
      input: Type.String(),
      result: Type.String(),
      success: Type.Boolean(),
    }),
  ),
  files_modified: Type.Array(Type.Object({ path: Type.String(), change: Type.String() })),
  progress: Type.Object({
    done: Type.Array(Type.String()),
    current: Type.String(),
    next: Type.Array(Type.String()),
  }),
  requirements: StrMap,
  errors_encountered: Type.Array(Type.Object({ error: Type.String(), resolution: Type.String() })),
});

export const ExtractedState = Type.Object({
  intent: Type.String(),
  difficulty: Type.String(),
  reasoning_effort: Type.String(),
  active_constraints: ActiveConstraints,
  conversation_status: Type.String(),
});

export type ExtractedState = Static<typeof ExtractedState>;
export type ActiveConstraints = Static<typeof ActiveConstraints>;

const check = TypeCompiler.Compile(ExtractedState);

export type ParseResult = { ok: true; state: ExtractedState } | { ok: false; problem: string };

/**
 * The answer's JSON object, checked against the schema. Tried in order: the whole answer,
 * a fenced block, the outermost braces (a fence inside a JSON string must not win).
 */
export function parseState(answer: string): ParseResult {
  const candidates: string[] = [answer.trim()];
  const fenced = /```(?:json)?\s*([\s\S]*?)```/.exec(answer);
  if (fenced?.[1]) candidates.push(fenced[1].trim());
  const start = answer.indexOf('{');
  const end = answer.lastIndexOf('}');
  if (start >= 0 && end > start) candidates.push(answer.slice(start, end + 1));
  let problem = 'no JSON object in the answer';
  for (const text of candidates) {
    if (!text.startsWith('{')) continue;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (err) {
      problem = `invalid JSON: ${(err as Error).message}`;
      continue;
    }
    if (check.Check(value)) return { ok: true, state: value };
    const first = check.Errors(value).First();
    return { ok: false, problem: first ? `${first.path || '/'}: ${first.message}` : 'schema mismatch' };
  }
  return { ok: false, problem };
}

/**
 * Adds every fact the model's state does not mention anywhere: paths and identifiers as
 * identifiers, requirements as requirements, unresolved errors as errors. Never removes.
 */
export function mergeFacts(state: ExtractedState, facts: Facts): ExtractedState {
  const seen = JSON.stringify(state);
  const missing = (s: string) => !seen.includes(s) && !seen.includes(JSON.stringify(s).slice(1, -1));
  const c = state.active_constraints;
  const identifiers = { ...c.identifiers };
  const requirements = { ...c.requirements };
  const errors = [...c.errors_encountered];
  const free = (map: Record<string, string>, base: string) => {
    let k = base;
    for (let n = 2; k in map; n++) k = `${base}_${n}`;
    return k;
  };
  for (const p of facts.paths) if (missing(p)) identifiers[free(identifiers, `file:${p}`)] = p;
  for (const id of facts.identifiers) if (missing(id)) identifiers[free(identifiers, id)] = id;
  facts.requirements.forEach((r, i) => {
    if (missing(r)) requirements[free(requirements, `stated_${i + 1}`)] = r;
  });
  for (const e of facts.errors) if (missing(e)) errors.push({ error: e, resolution: 'unresolved' });
  return {
    ...state,
    active_constraints: { ...c, identifiers, requirements, errors_encountered: errors },
  };
}

export const STATE_HEADER = '[Conversation state: earlier turns of this conversation, compressed by Gantry]';
export const RECOVERED_HEADER =
  '[Recovered context: content from earlier turns this conversation refers to again]';

/**
 * A user message: it keeps the provider's first turn a user turn whatever Recent starts
 * with, and it sits right after the system prompt so the prompt prefix stays the same
 * while the state does.
 */
export function stateMessage(state: ExtractedState): ChatMessage {
  return { role: 'user', content: `${STATE_HEADER}\n${JSON.stringify(state)}` };
}

export function recoveredMessage(items: readonly { label: string; content: string }[]): ChatMessage {
  const body = items.map((i) => `--- ${i.label} ---\n${i.content}`).join('\n\n');
  return { role: 'user', content: `${RECOVERED_HEADER}\n${body}` };
}
