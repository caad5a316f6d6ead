/**
 * The fake's moderation and rerank endpoints (OpenAI's, and the Cohere/Jina rerank shape
 * that openai-compatible servers such as vLLM and TEI expose), deterministic so tests can
 * assert exact answers: see README.md.
 */
import { asString, countTokens, isRecord, randomId } from './behaviour.ts';
import { openaiError } from './openai-errors.ts';
import type { ErrorReply, Outcome, Route } from './types.ts';
import { OPENAI_CATEGORIES } from '../formats/openai/moderation.ts';

/** The word that makes the fake's moderation flag a text (as `harassment`). */
export const FAKE_FLAG_WORD = 'flagme';

function moderationTexts(input: unknown): string[] | undefined {
  if (typeof input === 'string') return [input];
  if (!Array.isArray(input) || input.length === 0) return undefined;
  if (input.every((x) => typeof x === 'string')) return input as string[];
  if (!input.every(isRecord)) return undefined;
  return [input.map((p) => asString(p.text) ?? '').join('\n')];
}

function moderationResult(text: string) {
  const hit = text.toLowerCase().includes(FAKE_FLAG_WORD);
  const scores = Object.fromEntries(
    OPENAI_CATEGORIES.map((c) => [c, c === 'harassment' && hit ? 0.99 : 0.0001]),
  );
  const categories = Object.fromEntries(OPENAI_CATEGORIES.map((c) => [c, scores[c]! > 0.5]));
  return { flagged: hit, categories, category_scores: scores };
}

function validateModeration(body: Record<string, unknown>): ErrorReply | undefined {
  if (!moderationTexts(body.input))
    return openaiError(400, "Invalid value for 'input'.", 'invalid_request_error', null, 'input');
  return undefined;
}

function answerModeration(body: Record<string, unknown>): Outcome {
  const texts = moderationTexts(body.input) ?? [];
  return {
    kind: 'json',
    body: {
      id: randomId('modr-'),
      model: asString(body.model) ?? 'omni-moderation-latest',
      results: texts.map(moderationResult),
    },
  };
}

const words = (s: string): Set<string> => new Set(s.toLowerCase().match(/[a-z0-9]+/g) ?? []);

/** Share of the query's words a document contains, in 0..1: ties keep document order. */
export function fakeRelevance(query: string, document: string): number {
  const q = words(query);
  if (q.size === 0) return 0;
  const d = words(document);
  let shared = 0;
  for (const w of q) if (d.has(w)) shared += 1;
  return Math.round((shared / q.size) * 1e6) / 1e6;
}

const documentText = (d: unknown): string | undefined =>
  typeof d === 'string' ? d : isRecord(d) ? asString(d.text) : undefined;

function validateRerank(body: Record<string, unknown>): ErrorReply | undefined {
  if (typeof body.query !== 'string')
    return openaiError(400, "Invalid value for 'query'.", 'invalid_request_error', null, 'query');
  const docs = body.documents;
  if (!Array.isArray(docs) || docs.length === 0 || docs.some((d) => documentText(d) === undefined))
    return openaiError(400, "Invalid value for 'documents'.", 'invalid_request_error', null, 'documents');
  return undefined;
}

/** Cohere's billing: one search unit is a query over up to 100 documents. */
export const searchUnits = (documents: number): number => Math.max(1, Math.ceil(documents / 100));

function answerRerank(body: Record<string, unknown>): Outcome {
  const query = asString(body.query) ?? '';
  const docs = (body.documents as unknown[]).map((d) => documentText(d) ?? '');
  const topN = typeof body.top_n === 'number' ? body.top_n : docs.length;
  const ranked = docs
    .map((text, index) => ({ index, relevance_score: fakeRelevance(query, text), text }))
    .sort((a, b) => b.relevance_score - a.relevance_score || a.index - b.index)
    .slice(0, topN);
  const tokens = countTokens(query) * docs.length + docs.reduce((n, d) => n + countTokens(d), 0);
  return {
    kind: 'json',
    body: {
      id: randomId('rerank-'),
      model: asString(body.model),
      results: ranked.map(({ index, relevance_score, text }) => ({
        index,
        relevance_score,
        ...(body.return_documents === true && { document: { text } }),
      })),
      meta: { billed_units: { search_units: searchUnits(docs.length) } },
      usage: { total_tokens: tokens },
    },
  };
}

function jsonRoute(
  validate: (b: Record<string, unknown>) => ErrorReply | undefined,
  answer: (b: Record<string, unknown>) => Outcome,
  authorized: Route['authorized'],
  errors: Route['errors'],
): Route {
  return {
    errors,
    authorized,
    validate: (ctx) => validate(ctx.body),
    describe: (ctx) => ({ model: asString(ctx.body.model), stream: false }),
    answer: (ctx) => answer(ctx.body),
  };
}

/** POST routes of this file for `pathname`, when it is one of them. */
export function extraOpenaiRoute(
  pathname: string,
  authorized: Route['authorized'],
  errors: Route['errors'],
): Route | undefined {
  if (pathname.endsWith('/moderations'))
    return jsonRoute(validateModeration, answerModeration, authorized, errors);
  if (pathname.endsWith('/rerank')) return jsonRoute(validateRerank, answerRerank, authorized, errors);
  return undefined;
}
