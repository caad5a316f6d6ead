/** Canonical embeddings ↔ Gemini `batchEmbedContents` (one request per input text). */
import { GatewayError, invalidParam } from '../../errors.ts';
import type { EmbeddingRequest, EmbeddingResponse } from '../../formats/openai/types.ts';
import type { EmbeddingsAdapter, UpstreamRequest, UpstreamTarget } from '../types.ts';
import { geminiHeaders, geminiUrl, modelId } from './endpoint.ts';
import { isRecord } from '../shared/retry-after.ts';
import type { GeminiBatchEmbedRequest, GeminiBatchEmbedResponse } from './wire.ts';

/** Gemini embeds text only; pre-tokenised input (number arrays) has no Gemini form. */
function inputTexts(input: EmbeddingRequest['input']): string[] {
  const items: unknown[] = Array.isArray(input) ? input : [input];
  if (items.length === 0) throw invalidParam('input', 'must not be empty');
  return items.map((item) => {
    if (typeof item !== 'string') throw invalidParam('input', 'token arrays are not supported by this model');
    return item;
  });
}

export function toBatchEmbedRequest(req: EmbeddingRequest, target: UpstreamTarget): GeminiBatchEmbedRequest {
  const model = `models/${modelId(target.upstreamModel)}`;
  return {
    requests: inputTexts(req.input).map((text) => {
      const one: GeminiBatchEmbedRequest['requests'][number] = { model, content: { parts: [{ text }] } };
      if (req.dimensions !== undefined) one.outputDimensionality = req.dimensions;
      return one;
    }),
  };
}

export function embeddingsRequest(req: EmbeddingRequest, target: UpstreamTarget): UpstreamRequest {
  return {
    method: 'POST',
    url: geminiUrl(target, 'batchEmbedContents'),
    headers: geminiHeaders(target),
    body: JSON.stringify(toBatchEmbedRequest(req, target)),
  };
}

export function embeddingsResponse(body: unknown, target: UpstreamTarget): EmbeddingResponse {
  const res: GeminiBatchEmbedResponse = isRecord(body) ? body : {};
  const embeddings = res.embeddings;
  if (!Array.isArray(embeddings)) throw new GatewayError('upstream_error', 'Gemini returned no embeddings');
  return {
    object: 'list',
    data: embeddings.map((e, index) => ({
      object: 'embedding',
      index,
      embedding: Array.isArray(e.values) ? e.values : [],
    })),
    model: target.upstreamModel,
    // batchEmbedContents reports no token counts.
    usage: { prompt_tokens: 0, total_tokens: 0 },
  };
}

export const geminiEmbeddings: EmbeddingsAdapter = {
  request: embeddingsRequest,
  response: embeddingsResponse,
};
