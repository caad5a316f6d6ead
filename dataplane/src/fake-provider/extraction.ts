/**
 * The fake model's answer to Gantry's state-extraction prompt (a last user message that
 * starts with the extraction marker): a deterministic state of SPEC.md's shape, so the
 * compression stage can be tested end to end. The intent is the first user turn of the
 * transcript; `tool(...)` turns become actions. A transcript containing
 * `fake:invalid-state` gets an answer that is not JSON, for the `extraction_failed` path.
 */

/** Kept equal to the compression stage's marker (a test checks it). */
export const EXTRACTION_MARKER = 'gantry-state-extraction/v1';
export const INVALID_STATE_TRIGGER = 'fake:invalid-state';

export function isExtractionPrompt(lastUserText: string): boolean {
  return lastUserText.startsWith(EXTRACTION_MARKER);
}

const BLOCK = /<(user|assistant|tool\(([^)]*)\))>\n([\s\S]*?)\n<\/\1>/g;

const oneLine = (s: string, max: number) => {
  const t = s.replace(/\s+/g, ' ').trim();
  return t.length > max ? `${t.slice(0, max - 1)}…` : t;
};

export function fakeExtraction(prompt: string): string {
  if (prompt.includes(INVALID_STATE_TRIGGER)) return 'I could not summarise this conversation, sorry.';
  let intent = '';
  const done: string[] = [];
  const actions: { tool: string; input: string; result: string; success: boolean }[] = [];
  BLOCK.lastIndex = 0;
  for (let m = BLOCK.exec(prompt); m; m = BLOCK.exec(prompt)) {
    const [, who, callId, text = ''] = m;
    if (who === 'user' && intent === '') intent = oneLine(text, 120);
    else if (who === 'assistant') done.push(oneLine(text, 80));
    else if (callId !== undefined)
      actions.push({ tool: callId, input: '', result: oneLine(text, 80), success: !/error/i.test(text) });
  }
  const state = {
    intent: intent || 'continue the conversation',
    difficulty: 'standard',
    reasoning_effort: 'medium',
    active_constraints: {
      identifiers: {},
      values: {},
      actions_taken: actions.slice(-8),
      files_modified: [],
      progress: { done: done.slice(-4), current: 'continuing', next: [] },
      requirements: {},
      errors_encountered: [],
    },
    conversation_status: 'in_progress',
  };
  return JSON.stringify(state);
}
