/**
 * Token counts for budgets and for streams whose provider reports no usage (so nothing is
 * ever billed at zero). A real BPE tokenizer (o200k, GPT-4o's) gives the counts; for other
 * providers' models it is an estimate of the same order, settled later on real usage.
 */
import { createRequire } from 'node:module';
import type { ChatMessage, ChatRequest, Usage } from '../formats/openai/types.ts';

const IMAGE_TOKENS = 85;
const MESSAGE_OVERHEAD = 4;
/** Past this size the tokenizer costs more than the precision is worth: ~4 chars per token. */
const TOKENIZE_LIMIT_CHARS = 200_000;

/**
 * The BPE ranks take ~70 MB, so they load on first use (or at boot through `warmTokenizer`
 * when the config meters tokens), not in every data plane that never needs them.
 */
const requireCjs = createRequire(import.meta.url);
let countTokens: ((text: string) => number) | undefined;

function tokenizer(): (text: string) => number {
  countTokens ??= (
    requireCjs('gpt-tokenizer/cjs/encoding/o200k_base') as { countTokens: (t: string) => number }
  ).countTokens;
  return countTokens;
}

export function warmTokenizer(): void {
  tokenizer()('warm up');
}

/**
 * Agents resend their whole history every turn, and admission and compression both count
 * it: long texts are remembered (bounded by their total size), so each is tokenised once
 * and a 100k-token conversation's next turn costs map lookups, not a BPE pass.
 */
const MEMO_MIN_CHARS = 256;
const MEMO_MAX_CHARS = 16_000_000;
const memo = new Map<string, number>();
let memoChars = 0;

/**
 * BPE is quadratic in the length of a run without whitespace (200 KB of "xxx…" takes a
 * minute of one core, stalling every request): text holding such a run is counted in slices,
 * which bounds the work and over-counts normal text by about 1.5 %.
 */
const LONG_RUN = /\S{256}/;
const SLICE_CHARS = 256;

function countBounded(text: string): number {
  if (!LONG_RUN.test(text)) return tokenizer()(text);
  let n = 0;
  for (let i = 0; i < text.length; i += SLICE_CHARS) n += tokenizer()(text.slice(i, i + SLICE_CHARS));
  return n;
}

function countRemembered(text: string): number {
  if (text.length < MEMO_MIN_CHARS) return tokenizer()(text);
  const hit = memo.get(text);
  if (hit !== undefined) return hit;
  const n = countBounded(text);
  memo.set(text, n);
  memoChars += text.length;
  for (const old of memo.keys()) {
    if (memoChars <= MEMO_MAX_CHARS) break;
    memo.delete(old);
    memoChars -= old.length;
  }
  return n;
}

export const estimateTextTokens = (text: string): number =>
  text.length === 0
    ? 0
    : text.length > TOKENIZE_LIMIT_CHARS
      ? Math.ceil(text.length / 4)
      : countRemembered(text);

/**
 * Characters tokenised between yields to the event loop. BPE on a run of long words costs up
 * to ~2.5 ms a thousand characters, so a slice stalls other requests for ~20 ms at worst.
 */
const SLICE_YIELD_CHARS = 8_000;
/**
 * Past this many UTF-8 bytes a file is not tokenised: its bytes are the bound. Tokenising
 * costs up to ~1 s of CPU a megabyte (long words), so without it every upload of a large
 * file would buy seconds of one core for the price of one rate-limit ticket.
 */
export const TOKENIZE_FILE_MAX_BYTES = 2_000_000;

/**
 * Where the slice of `text` from `start` ends: after its last newline within SLICE_YIELD_CHARS
 * (whole lines are counted as they are), else at SLICE_YIELD_CHARS of a longer line, never
 * splitting a surrogate pair.
 */
function sliceEnd(text: string, start: number): number {
  const limit = start + SLICE_YIELD_CHARS;
  if (limit >= text.length) return text.length;
  const newline = text.lastIndexOf('\n', limit - 1);
  if (newline >= start) return newline + 1;
  const last = text.charCodeAt(limit - 1);
  return last >= 0xd800 && last <= 0xdbff ? limit - 1 : limit;
}

const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/**
 * At least as many tokens as `text` holds, for a worst case that must not fall short (a
 * fine-tuning file's hold). Up to TOKENIZE_FILE_MAX_BYTES: in slices of at most
 * SLICE_YIELD_CHARS, cut after a newline where one falls within it (a boundary splits what
 * BPE might have merged, so the sum is the exact count or a little more: the tests check it
 * on three scripts; a whole file's chars ÷ 4, which this replaced, undercounted CJK text ~2
 * times), with a yield to the event loop between slices, so no other request waits for more
 * than one. Larger files count their
 * UTF-8 bytes, which no byte-level BPE token sequence exceeds (a token covers at least one
 * byte): cheap and safe, but ~4 times an English file's real count.
 */
export async function countTokensAtMost(text: string): Promise<number> {
  const bytes = Buffer.byteLength(text);
  if (bytes > TOKENIZE_FILE_MAX_BYTES) return bytes;
  let n = 0;
  for (let start = 0; start < text.length;) {
    if (start > 0) await nextTurn();
    const end = sliceEnd(text, start);
    n += countBounded(text.slice(start, end));
    start = end;
  }
  return n;
}

export function estimateMessageTokens(m: ChatMessage): number {
  let tokens = MESSAGE_OVERHEAD;
  if (typeof m.content === 'string') tokens += estimateTextTokens(m.content);
  else if (Array.isArray(m.content)) {
    for (const part of m.content) {
      if (part.type === 'text' && typeof part.text === 'string') tokens += estimateTextTokens(part.text);
      else if (part.type === 'image_url') tokens += IMAGE_TOKENS;
    }
  }
  for (const call of m.tool_calls ?? [])
    tokens += estimateTextTokens(call.function.name + call.function.arguments);
  return tokens;
}

export function estimatePromptTokens(req: ChatRequest): number {
  let tokens = 0;
  for (const m of req.messages) tokens += estimateMessageTokens(m);
  if (req.tools) tokens += estimateTextTokens(JSON.stringify(req.tools));
  return tokens;
}

export function estimatedUsage(req: ChatRequest, completionText: string): Usage {
  const prompt = estimatePromptTokens(req);
  const completion = estimateTextTokens(completionText);
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
}
