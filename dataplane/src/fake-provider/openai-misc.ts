/** OpenAI legacy completions, embeddings and the model list (Azure speaks the first two). */
import {
  capOf,
  countTokens,
  isRecord,
  nowSeconds,
  plan,
  randomId,
  splitFixed,
  splitWords,
} from './behaviour.ts';
import { DEFAULT_EMBEDDING_DIMS, fakeEmbedding, toBase64 } from './embedding.ts';
import { OPENAI_GARBAGE } from './openai-chat.ts';
import { openaiError } from './openai-errors.ts';
import type { ErrorReply, Frame, Outcome, Reply } from './types.ts';

/** A prompt/input as texts: token-id arrays are joined so they still hash deterministically. */
function texts(input: unknown): { texts: string[]; tokens: number[] } | undefined {
  const one = (v: unknown): { text: string; tokens: number } | undefined => {
    if (typeof v === 'string') return { text: v, tokens: countTokens(v) };
    if (Array.isArray(v) && v.every((x) => typeof x === 'number'))
      return { text: v.join(' '), tokens: v.length };
    return undefined;
  };
  const list = Array.isArray(input) && !input.every((x) => typeof x === 'number') ? input : [input];
  const read = list.map(one);
  if (read.length === 0 || read.some((r) => r === undefined)) return undefined;
  const ok = read as { text: string; tokens: number }[];
  return { texts: ok.map((r) => r.text), tokens: ok.map((r) => r.tokens) };
}

/** OpenAI's legacy completions stop at 16 tokens when the request sets no `max_tokens`. */
export const LEGACY_DEFAULT_MAX_TOKENS = 16;

function completionReply(prompt: string, maxTokens: number): Reply {
  return plan({
    lastUserText: prompt,
    promptChars: prompt.length,
    images: 0,
    prefill: undefined,
    lastIsToolResult: false,
    tools: [],
    toolChoice: 'none',
    maxTokens,
  });
}

export function validateCompletion(
  body: Record<string, unknown>,
  needModel: boolean,
): ErrorReply | undefined {
  if (needModel && typeof body.model !== 'string') {
    return openaiError(400, 'you must provide a model parameter', 'invalid_request_error');
  }
  if (!texts(body.prompt)) {
    return openaiError(400, "Invalid value for 'prompt'.", 'invalid_request_error', null, 'prompt');
  }
  return undefined;
}

/** Legacy logprobs in their four parallel lists. */
interface LegacyLogprobs {
  tokens: string[];
  token_logprobs: (number | null)[];
  top_logprobs: (Record<string, number> | null)[];
  text_offset: number[];
}

/**
 * The legacy logprobs of `text`, as vLLM gives them: each fake token (4 characters, as
 * `countTokens` counts) with its own logprob and `n` alternatives, about 600 bytes a token at
 * 20 alternatives. The first token of an echoed prompt has none (nothing came before it);
 * `offset` is where `text` starts in the choice's whole text.
 */
function legacyLogprobs(text: string, n: number, offset: number, opensPrompt: boolean): LegacyLogprobs {
  const tokens = splitFixed(text, 4);
  let at = offset;
  const textOffset = tokens.map((t) => (at += t.length) - t.length);
  const top = tokens.map((t) =>
    Object.fromEntries(Array.from({ length: n }, (_, k) => [`${t}#${k}`, -0.0123456789 * (k + 1)])),
  );
  const first = (i: number): boolean => opensPrompt && i === 0;
  return {
    tokens,
    token_logprobs: tokens.map((_, i) => (first(i) ? null : -0.0123456789)),
    top_logprobs: top.map((alternatives, i) => (first(i) ? null : alternatives)),
    text_offset: textOffset,
  };
}

const joinLogprobs = (a: LegacyLogprobs, b: LegacyLogprobs): LegacyLogprobs => ({
  tokens: [...a.tokens, ...b.tokens],
  token_logprobs: [...a.token_logprobs, ...b.token_logprobs],
  top_logprobs: [...a.top_logprobs, ...b.top_logprobs],
  text_offset: [...a.text_offset, ...b.text_offset],
});

/** `logprobs` as a count of alternatives, when the request asks for them (capped by `openai-caps.ts`). */
const logprobsAsked = (body: Record<string, unknown>): number | undefined =>
  typeof body.logprobs === 'number' && Number.isInteger(body.logprobs) && body.logprobs >= 0
    ? body.logprobs
    : undefined;

export function answerCompletion(body: Record<string, unknown>, model: string, usage: boolean): Outcome {
  const prompts = texts(body.prompt)?.texts ?? [''];
  const cap = capOf(body.max_tokens) ?? LEGACY_DEFAULT_MAX_TOKENS;
  const replies = prompts.map((p) => completionReply(p, cap));
  const promptTokens = replies.reduce((n, r) => n + r.promptTokens, 0);
  const completionTokens = replies.reduce((n, r) => n + r.completionTokens, 0);
  const usageBody = {
    prompt_tokens: promptTokens,
    completion_tokens: completionTokens,
    total_tokens: promptTokens + completionTokens,
  };
  const id = randomId('cmpl-');
  const created = nowSeconds();
  const textOf = (r: Reply): string => (r.kind === 'text' ? r.text : '');
  if (body.stream !== true) {
    const choices = replies.map((r, index) => ({
      text: textOf(r),
      index,
      logprobs: null,
      finish_reason: r.cut ? 'length' : 'stop',
    }));
    const out: Record<string, unknown> = { id, object: 'text_completion', created, model, choices };
    if (usage) out.usage = usageBody;
    return { kind: 'json', body: out };
  }
  const includeUsage = usage && isRecord(body.stream_options) && body.stream_options.include_usage === true;
  const chunk = (choices: unknown[], extra: Record<string, unknown> = {}): string => {
    const base: Record<string, unknown> = { id, object: 'text_completion', created, choices, model };
    if (includeUsage) base.usage = null;
    return `data: ${JSON.stringify({ ...base, ...extra })}\n\n`;
  };
  const frames: Frame[] = [];
  const alternatives = logprobsAsked(body);
  replies.forEach((r, index) => {
    const words = splitWords(textOf(r));
    // `echo`, as vLLM sends it: the prompt, whole, in the same event as the first generated
    // token, with the logprobs of both when they are asked.
    const prompt = body.echo === true ? (prompts[index] ?? '') : '';
    let offset = 0;
    words.forEach((w, i) => {
      const text = i === 0 ? prompt + w : w;
      let logprobs: LegacyLogprobs | null = null;
      if (alternatives !== undefined) {
        logprobs = legacyLogprobs(w, alternatives, offset + text.length - w.length, false);
        if (i === 0 && body.echo === true)
          logprobs = joinLogprobs(legacyLogprobs(prompt, alternatives, 0, true), logprobs);
      }
      offset += text.length;
      frames.push({ role: 'content', data: chunk([{ text, index, logprobs, finish_reason: null }]) });
    });
    if (words.length === 0 && body.echo === true) {
      const logprobs = alternatives === undefined ? null : legacyLogprobs(prompt, alternatives, 0, true);
      frames.push({ role: 'content', data: chunk([{ text: prompt, index, logprobs, finish_reason: null }]) });
    }
    const finish_reason = r.cut ? 'length' : 'stop';
    frames.push({ role: 'post', data: chunk([{ text: '', index, logprobs: null, finish_reason }]) });
  });
  if (includeUsage) frames.push({ role: 'post', data: chunk([], { usage: usageBody }) });
  frames.push({ role: 'end', data: 'data: [DONE]\n\n' });
  return { kind: 'stream', contentType: 'text/event-stream; charset=utf-8', frames, garbage: OPENAI_GARBAGE };
}

export function validateEmbeddings(
  body: Record<string, unknown>,
  needModel: boolean,
): ErrorReply | undefined {
  if (needModel && typeof body.model !== 'string') {
    return openaiError(400, 'you must provide a model parameter', 'invalid_request_error');
  }
  if (!texts(body.input)) {
    return openaiError(
      400,
      "'input' is a required property (string or array of strings).",
      'invalid_request_error',
      null,
      'input',
    );
  }
  const dims = body.dimensions;
  if (dims !== undefined && !(typeof dims === 'number' && Number.isInteger(dims) && dims > 0)) {
    return openaiError(400, "Invalid value for 'dimensions'.", 'invalid_request_error', null, 'dimensions');
  }
  const enc = body.encoding_format;
  if (enc !== undefined && enc !== 'float' && enc !== 'base64') {
    return openaiError(
      400,
      "Invalid value for 'encoding_format'.",
      'invalid_request_error',
      null,
      'encoding_format',
    );
  }
  return undefined;
}

export function answerEmbeddings(body: Record<string, unknown>, model: string, usage: boolean): Outcome {
  const read = texts(body.input) ?? { texts: [''], tokens: [0] };
  const dims = typeof body.dimensions === 'number' ? body.dimensions : DEFAULT_EMBEDDING_DIMS;
  const data = read.texts.map((t, index) => {
    const v = fakeEmbedding(t, dims);
    return { object: 'embedding', index, embedding: body.encoding_format === 'base64' ? toBase64(v) : v };
  });
  const tokens = read.tokens.reduce((n, x) => n + x, 0);
  const out: Record<string, unknown> = { object: 'list', data, model };
  if (usage) out.usage = { prompt_tokens: tokens, total_tokens: tokens };
  return { kind: 'json', body: out };
}

export const FAKE_MODELS = [
  'gpt-4o',
  'gpt-4o-mini',
  'gpt-4.1-mini',
  'o3-mini',
  'gpt-3.5-turbo-instruct',
  'text-embedding-3-small',
  'text-embedding-3-large',
];

export function answerModels(): Outcome {
  const data = FAKE_MODELS.map((id) => ({ id, object: 'model', created: 1700000000, owned_by: 'system' }));
  return { kind: 'json', body: { object: 'list', data } };
}
