import { describe, expect, it } from 'vitest';
import { endpointOfRoute } from './endpoint-of-route.ts';
import type { UsageEndpoint } from './usage.ts';

// Every /v1 route label the gateway registers, with the endpoint its refusals are recorded under.
const ROUTES: [string, UsageEndpoint][] = [
  ['/v1/chat/completions', 'chat'],
  ['/v1/completions', 'completions'],
  ['/v1/embeddings', 'embeddings'],
  ['/v1/messages', 'messages'],
  ['/v1/messages/count_tokens', 'token_counter'],
  ['/v1/utils/token_counter', 'token_counter'],
  ['/v1/responses', 'responses'],
  ['/v1/responses/:id', 'responses'],
  ['/v1/responses/compact', 'responses'],
  ['/v1/responses/input_tokens', 'responses'],
  ['/v1/moderations', 'moderations'],
  ['/v1/rerank', 'rerank'],
  ['/v1/ocr', 'ocr'],
  ['/v1/images/generations', 'images'],
  ['/v1/images/edits', 'images'],
  ['/v1/images/variations', 'images'],
  ['/v1/audio/speech', 'audio.speech'],
  ['/v1/audio/transcriptions', 'audio.transcriptions'],
  ['/v1/videos', 'videos'],
  ['/v1/videos/:video_id/content', 'videos'],
  ['/v1/a2a/*', 'a2a'],
  ['/v1/interactions/:id', 'interactions'],
  ['/v1/rag/ingest', 'rag.ingest'],
  ['/v1/rag/query', 'rag.query'],
  ['/v1/files/:id/content', 'files'],
  ['/v1/batches/:id/cancel', 'batches'],
  ['/v1/vector_stores/:id/search', 'vector_stores'],
  ['/v1/assistants/:id', 'assistants'],
  ['/v1/containers/:id/files/:file_id/content', 'containers'],
  ['/v1/fine_tuning/jobs/:id/cancel', 'fine_tuning'],
  ['/v1/realtime/client_secrets', 'realtime'],
  ['/v1/generateContent', 'generate_content'],
  ['/v1/streamGenerateContent', 'generate_content'],
  ['/v1/models/:target', 'generate_content'],
  ['/v1/models', 'models'],
  ['/v1/models/*', 'models'],
];

describe('endpointOfRoute', () => {
  it.each(ROUTES)('%s → %s', (route, endpoint) => expect(endpointOfRoute(route)).toBe(endpoint));

  it('falls back to chat for labels it does not know, including prototype names', () => {
    for (const route of ['unknown', '', '/v1', '/v1/', '/v1/constructor', '/v1/__proto__/x', '/v1/toString'])
      expect(endpointOfRoute(route)).toBe('chat');
  });
});
