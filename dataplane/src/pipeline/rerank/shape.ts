/**
 * The Cohere/Jina rerank shape, as callers send it and as Gantry answers it, whatever the
 * upstream's dialect (vLLM, TEI, Jina and Cohere agree on `results[].index` and
 * `relevance_score`; they differ on where they report usage). Pure.
 */
import { UpstreamFailure } from '../../router/upstream.ts';

export type RerankDocument = string | { text: string; [key: string]: unknown };

export interface RerankRequest {
  model: string;
  query: string;
  documents: RerankDocument[];
  top_n?: number | undefined;
  return_documents?: boolean | undefined;
  [key: string]: unknown;
}

export interface RerankResult {
  index: number;
  relevance_score: number;
  document?: { text: string } | undefined;
}

export interface RerankResponse {
  id: string;
  model: string;
  results: RerankResult[];
  meta: { billed_units: { search_units: number } };
  usage: { total_tokens: number };
}

export interface UpstreamRerank {
  results: RerankResult[];
  id: string | undefined;
  searchUnits: number | undefined;
  tokens: number | undefined;
}

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

const bad = (message: string) => new UpstreamFailure({ kind: 'server', status: 0, message });

export const documentText = (d: RerankDocument): string => (typeof d === 'string' ? d : d.text);

/** Read an upstream answer; indexes must point into the documents sent. */
export function readUpstreamRerank(body: Record<string, unknown>, documents: number): UpstreamRerank {
  // TEI answers a bare array; the others wrap it in `results` (older Jina: `data`).
  const list = Array.isArray(body.results) ? body.results : Array.isArray(body.data) ? body.data : undefined;
  if (!list) throw bad('rerank answer without results');
  const results = list.map((r): RerankResult => {
    if (!isRecord(r)) throw bad('rerank result is not an object');
    const index = r.index;
    const score = r.relevance_score ?? r.score;
    if (typeof index !== 'number' || !Number.isInteger(index) || index < 0 || index >= documents)
      throw bad(`rerank result index ${String(index)} is outside the ${documents} documents sent`);
    if (typeof score !== 'number') throw bad('rerank result without a relevance_score');
    return { index, relevance_score: score };
  });
  const meta = isRecord(body.meta) && isRecord(body.meta.billed_units) ? body.meta.billed_units : undefined;
  const usage = isRecord(body.usage) ? body.usage : undefined;
  const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : undefined);
  return {
    results,
    id: typeof body.id === 'string' ? body.id : undefined,
    searchUnits: num(meta?.search_units),
    tokens: num(usage?.total_tokens) ?? num(usage?.prompt_tokens),
  };
}

/** Best first, cut to `top_n`, documents attached from the request when asked for. */
export function shapeResults(upstream: readonly RerankResult[], req: RerankRequest): RerankResult[] {
  const sorted = [...upstream].sort((a, b) => b.relevance_score - a.relevance_score || a.index - b.index);
  const cut = req.top_n === undefined ? sorted : sorted.slice(0, req.top_n);
  return cut.map(({ index, relevance_score }) => ({
    index,
    relevance_score,
    ...(req.return_documents === true && { document: { text: documentText(req.documents[index]!) } }),
  }));
}
