/**
 * The edge bound on JSON nesting, checked right after the body is parsed and before schema
 * validation or any later step walks it. Tool-call arguments are JSON carried as text, which
 * translations to other providers parse: they are held to the same limit.
 */
import { invalidParam } from '../errors.ts';
import { depthMessage, exceedsDepth, textExceedsDepth } from '../formats/json-depth.ts';

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

export function checkJsonDepth(body: unknown, limit: number): void {
  if (exceedsDepth(body, limit)) throw invalidParam('body', depthMessage(limit));
  // Not validated yet: anything may be missing or of the wrong type here.
  const messages = isRecord(body) ? body.messages : undefined;
  if (!Array.isArray(messages)) return;
  for (let i = 0; i < messages.length; i++) {
    const message: unknown = messages[i];
    const calls = isRecord(message) ? message.tool_calls : undefined;
    if (!Array.isArray(calls)) continue;
    for (let j = 0; j < calls.length; j++) {
      const call: unknown = calls[j];
      const fn = isRecord(call) ? call.function : undefined;
      const args = isRecord(fn) ? fn.arguments : undefined;
      if (typeof args === 'string' && textExceedsDepth(args, limit))
        throw invalidParam(`messages[${i}].tool_calls[${j}].function.arguments`, depthMessage(limit));
    }
  }
}
