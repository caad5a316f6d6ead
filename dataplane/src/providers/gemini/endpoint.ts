/** Where a Gemini call goes and how it authenticates. */
import type { UpstreamTarget } from '../types.ts';

export type GeminiMethod = 'generateContent' | 'streamGenerateContent' | 'batchEmbedContents';

/** Model ids may be configured with or without Gemini's `models/` resource prefix. */
export const modelId = (model: string): string => model.replace(/^models\//, '');

export function geminiUrl(target: UpstreamTarget, method: GeminiMethod): string {
  const base = `${target.baseUrl}/models/${modelId(target.upstreamModel)}:${method}`;
  // Without alt=sse Gemini streams one big JSON array instead of server-sent events.
  return method === 'streamGenerateContent' ? `${base}?alt=sse` : base;
}

export function geminiHeaders(target: UpstreamTarget): Record<string, string> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (target.apiKey !== undefined) headers['x-goog-api-key'] = target.apiKey;
  return headers;
}
