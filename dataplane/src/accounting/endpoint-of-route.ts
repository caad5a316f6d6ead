/**
 * The endpoint a request is recorded under when it fails before its pipeline names one (a
 * schema 400, an unknown model, a refused key): read from the route it was sent to, so a bad
 * embeddings call counts as `embeddings`, not as the `chat` default.
 */
import type { UsageEndpoint } from './usage.ts';

/** First path segment under /v1 → endpoint, where that segment alone decides. */
const BY_SEGMENT: Readonly<Record<string, UsageEndpoint>> = {
  chat: 'chat',
  completions: 'completions',
  embeddings: 'embeddings',
  moderations: 'moderations',
  rerank: 'rerank',
  ocr: 'ocr',
  images: 'images',
  videos: 'videos',
  a2a: 'a2a',
  interactions: 'interactions',
  files: 'files',
  batches: 'batches',
  vector_stores: 'vector_stores',
  assistants: 'assistants',
  containers: 'containers',
  realtime: 'realtime',
  fine_tuning: 'fine_tuning',
  responses: 'responses',
  messages: 'messages',
  models: 'models',
  utils: 'token_counter',
  // Gemini's own paths (`/v1/models/{model}:generateContent` is labelled /v1/models/:target).
  generateContent: 'generate_content',
  streamGenerateContent: 'generate_content',
};

/** Routes whose first segment is shared by endpoints recorded apart. */
const BY_ROUTE: Readonly<Record<string, UsageEndpoint>> = {
  '/v1/messages/count_tokens': 'token_counter',
  '/v1/audio/speech': 'audio.speech',
  '/v1/audio/transcriptions': 'audio.transcriptions',
  '/v1/rag/ingest': 'rag.ingest',
  '/v1/rag/query': 'rag.query',
  '/v1/models/:target': 'generate_content',
};

/** `route` is the route's stable label (route-label.ts), never the raw URL. */
export function endpointOfRoute(route: string): UsageEndpoint {
  if (Object.hasOwn(BY_ROUTE, route)) return BY_ROUTE[route]!;
  const segment = route.split('/', 3)[2] ?? '';
  return Object.hasOwn(BY_SEGMENT, segment) ? BY_SEGMENT[segment]! : 'chat';
}
