/**
 * How deeply JSON nests, measured without recursion. V8 parses any depth, but its own
 * serialisers (JSON.stringify, structuredClone) and every recursive walk in the gateway
 * overflow the stack a few thousand levels down; a bound checked at the edge keeps every
 * later step safe.
 *
 * Depth counts containers: `1` and `"x"` are 0 deep, `[]` and `{}` 1, `[{}]` 2.
 */

/** Real requests stay far below: tool and structured-output schemas nest 20-30 levels. */
export const DEFAULT_MAX_JSON_DEPTH = 64;

/**
 * The most a deployment may configure. JSON.stringify and structuredClone overflow near
 * 5,000 levels on Node's default stack, and the gateway serialises a request inside deep
 * call stacks: 1,000 keeps a wide margin.
 */
export const MAX_JSON_DEPTH_CEILING = 1000;

/** True when a parsed JSON value nests deeper than `limit`. Stops at the first offender. */
export function exceedsDepth(value: unknown, limit: number): boolean {
  if (typeof value !== 'object' || value === null) return false;
  if (limit < 1) return true;
  // Two parallel stacks: no per-node allocation beyond the push.
  const nodes: object[] = [value];
  const depths: number[] = [1];
  while (nodes.length > 0) {
    const node = nodes.pop() as object;
    const child = (depths.pop() as number) + 1;
    if (Array.isArray(node)) {
      for (let i = 0; i < node.length; i++) {
        const v: unknown = node[i];
        if (typeof v !== 'object' || v === null) continue;
        if (child > limit) return true;
        nodes.push(v);
        depths.push(child);
      }
    } else {
      // for-in over a parsed object sees only its own keys and allocates nothing.
      for (const key in node) {
        const v: unknown = (node as Record<string, unknown>)[key];
        if (typeof v !== 'object' || v === null) continue;
        if (child > limit) return true;
        nodes.push(v);
        depths.push(child);
      }
    }
  }
  return false;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_ARRAY = 0x5b;
const OPEN_OBJECT = 0x7b;
const CLOSE_ARRAY = 0x5d;
const CLOSE_OBJECT = 0x7d;

/**
 * True when JSON text (e.g. tool-call `arguments`, which arrive as a string) nests deeper than
 * `limit`, without parsing it. Brackets inside strings do not count; string bodies are
 * skipped with indexOf. Malformed text is not judged here: a parser rejects it later.
 */
export function textExceedsDepth(text: string, limit: number): boolean {
  // Each level takes a bracket: a text no longer than the limit cannot pass it. Most texts
  // checked (a stream's every event, for one) are far shorter than the limit, and skip the scan.
  if (text.length <= limit) return false;
  let depth = 0;
  const n = text.length;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      i = closingQuote(text, i + 1);
      if (i === -1) return false;
    } else if (c === OPEN_ARRAY || c === OPEN_OBJECT) {
      if (++depth > limit) return true;
    } else if (c === CLOSE_ARRAY || c === CLOSE_OBJECT) {
      depth--;
    }
  }
  return false;
}

/** Index of the quote ending a string whose body starts at `from`; -1 when unterminated. */
function closingQuote(text: string, from: number): number {
  let j = text.indexOf('"', from);
  while (j !== -1) {
    let backslashes = 0;
    for (let k = j - 1; k >= from && text.charCodeAt(k) === BACKSLASH; k--) backslashes++;
    // An even run of backslashes escapes itself, not the quote.
    if (backslashes % 2 === 0) return j;
    j = text.indexOf('"', j + 1);
  }
  return -1;
}

/** The message every depth refusal carries, so a caller knows the limit to stay under. */
export const depthMessage = (limit: number): string => `JSON nesting depth exceeds ${limit}`;

/** A configured limit, checked once at boot: a whole number from 1 to the ceiling. */
export function jsonDepthLimit(value: number | string | undefined, source = 'maxJsonDepth'): number {
  if (value === undefined || value === '') return DEFAULT_MAX_JSON_DEPTH;
  const n = typeof value === 'number' ? value : Number(value);
  if (!Number.isInteger(n) || n < 1 || n > MAX_JSON_DEPTH_CEILING)
    throw new Error(
      `${source} must be a whole number from 1 to ${MAX_JSON_DEPTH_CEILING}, got ${String(value)}`,
    );
  return n;
}
