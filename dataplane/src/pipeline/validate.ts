/**
 * Checks the JSON schema cannot express: data-URL media types and sizes, and what the
 * requested model must be able to do for this request. Every failure names the field.
 */
import type { Capability } from '@gantry/crds';
import type { ModelRoute } from '../config/snapshot.ts';
import { GatewayError, invalidParam } from '../errors.ts';
import type { ChatRequest, CompletionRequest } from '../formats/openai/types.ts';

export const IMAGE_MEDIA_TYPES: ReadonlySet<string> = new Set([
  'image/png',
  'image/jpeg',
  'image/gif',
  'image/webp',
]);
export const DOCUMENT_MEDIA_TYPES: ReadonlySet<string> = new Set(['application/pdf']);
export const MAX_FILE_BYTES = 20 * 1024 * 1024;

export type Endpoint = 'chat' | 'embeddings' | 'completions';

export interface ChatNeeds {
  capabilities: Capability[];
  /** Field that made each capability necessary, for the error message. */
  because: Partial<Record<Capability, string>>;
}

/** Validate media parts and collect what the request needs from a deployment. */
export function inspectChat(req: ChatRequest): ChatNeeds {
  const because: ChatNeeds['because'] = { chat: 'messages' };
  if (req.stream) because.streaming = 'stream';
  if (req.tools && req.tools.length > 0) because.tools = 'tools';
  req.messages.forEach((m, i) => {
    if (!Array.isArray(m.content)) return;
    m.content.forEach((part, j) => {
      if (part.type !== 'image_url') return;
      const param = `messages[${i}].content[${j}].image_url.url`;
      const url = (part as { image_url?: { url?: unknown } }).image_url?.url;
      if (typeof url !== 'string') throw invalidParam(param, 'must be a string');
      const kind = mediaKind(url, param);
      if (kind === 'document') because.documents ??= param;
      else because.vision ??= param;
    });
  });
  return { capabilities: Object.keys(because) as Capability[], because };
}

function mediaKind(url: string, param: string): 'image' | 'document' {
  if (url.startsWith('https://') || url.startsWith('http://')) return 'image';
  if (!url.startsWith('data:')) throw invalidParam(param, 'must be an http(s) URL or a data URL');
  const comma = url.indexOf(',');
  const header = url.slice(5, comma === -1 ? undefined : comma);
  const [mediaType = '', ...params] = header.split(';');
  if (comma === -1 || !params.includes('base64'))
    throw invalidParam(param, 'a data URL must have the form data:<media type>;base64,<data>');
  const type = mediaType.toLowerCase();
  const bytes = Math.floor(((url.length - comma - 1) * 3) / 4);
  if (bytes > MAX_FILE_BYTES)
    throw new GatewayError(
      'request_too_large',
      `${param}: file of ${bytes} bytes exceeds ${MAX_FILE_BYTES} bytes`,
      {
        param,
      },
    );
  if (IMAGE_MEDIA_TYPES.has(type)) return 'image';
  if (DOCUMENT_MEDIA_TYPES.has(type)) return 'document';
  throw invalidParam(
    param,
    `unsupported media type ${type || '(none)'}; accepted: ${[...IMAGE_MEDIA_TYPES, ...DOCUMENT_MEDIA_TYPES].join(', ')}`,
  );
}

const ENDPOINT_PATH: Record<Endpoint, string> = {
  chat: '/v1/chat/completions',
  embeddings: '/v1/embeddings',
  completions: '/v1/completions',
};

/** The model must be able to do what the request needs somewhere among its deployments. */
export function checkCapabilities(route: ModelRoute, endpoint: Endpoint, needs: ChatNeeds | undefined): void {
  const endpointCapability: Capability = endpoint;
  if (!route.capabilities.has(endpointCapability))
    throw new GatewayError(
      'unsupported_endpoint',
      `model ${route.model} does not support the ${ENDPOINT_PATH[endpoint]} endpoint`,
      { param: 'model' },
    );
  for (const capability of needs?.capabilities ?? []) {
    if (route.capabilities.has(capability)) continue;
    const param = needs?.because[capability] ?? 'model';
    const what = capability === 'documents' ? 'document (PDF) input' : capability;
    throw invalidParam(param, `model ${route.model} does not support ${what}`);
  }
}

/**
 * An output bound larger than every context window of the model is a mistake the provider
 * would reject after the gateway had reserved (and maybe refused) money for it: refuse it
 * here, naming the field. Models whose deployments do not all declare a window are not checked.
 */
export function checkOutputBound(route: ModelRoute, param: string, value: number | undefined): void {
  if (value === undefined || route.deployments.length === 0) return;
  let largest = 0;
  for (const d of route.deployments) {
    if (d.contextWindow === undefined) return;
    largest = Math.max(largest, d.contextWindow);
  }
  if (value > largest)
    throw invalidParam(
      param,
      `${value} exceeds the context window of model ${route.model} (${largest} tokens)`,
    );
}

/** The output bound a chat request sets, and the field that set it (the newer name wins). */
export function chatOutputField(req: ChatRequest): { param: string; value: number | undefined } {
  return req.max_completion_tokens !== undefined
    ? { param: 'max_completion_tokens', value: req.max_completion_tokens }
    : { param: 'max_tokens', value: req.max_tokens };
}

/** OpenAI's rules for legacy candidates: `best_of` is at least `n`, and cannot be streamed. */
export function checkCompletionChoices(req: CompletionRequest): void {
  const n = req.n ?? 1;
  const bestOf = req.best_of;
  if (bestOf === undefined) return;
  if (bestOf < n) throw invalidParam('best_of', `must be at least n (${n})`);
  if (req.stream && bestOf > 1) throw invalidParam('best_of', 'cannot be above 1 when stream is true');
}

/** Sequences a legacy completion generates and bills: every prompt, times its candidates. */
export function completionSequences(req: CompletionRequest): number {
  const prompts = Array.isArray(req.prompt) ? req.prompt.length : 1;
  return prompts * Math.max(req.n ?? 1, req.best_of ?? 1);
}
