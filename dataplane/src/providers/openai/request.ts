import type {
  ChatMessage,
  ChatRequest,
  CompletionRequest,
  EmbeddingRequest,
} from '../../formats/openai/types.ts';
import { foreignRequest } from '../../formats/anthropic/native.ts';
import type { UpstreamRequest, UpstreamTarget } from '../types.ts';

const AZURE_DEFAULT_API_VERSION = '2024-10-21';

/** Where an OpenAI-style operation lives: Azure addresses the deployment in the path. */
export function endpointUrl(
  target: UpstreamTarget,
  /** An OpenAI path below /v1: chat/completions, embeddings, images/generations, videos/{id}, ... */
  operation: string,
) {
  if (target.provider === 'azure-openai') {
    const version = encodeURIComponent(target.apiVersion ?? AZURE_DEFAULT_API_VERSION);
    return `${target.baseUrl}/openai/deployments/${encodeURIComponent(target.upstreamModel)}/${operation}?api-version=${version}`;
  }
  return `${target.baseUrl}/${operation}`;
}

export function authHeaders(target: UpstreamTarget): Record<string, string> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (target.apiKey === undefined) return headers;
  if (target.provider === 'azure-openai') headers['api-key'] = target.apiKey;
  else headers.authorization = `Bearer ${target.apiKey}`;
  return headers;
}

export function chatRequest(req: ChatRequest, target: UpstreamTarget): UpstreamRequest {
  req = foreignRequest(req, target.provider, true);
  const body: ChatRequest = {
    ...req,
    model: target.upstreamModel,
    messages: req.messages.map(stripInternal),
  };
  if (req.tools) body.tools = stripTools(req.tools);
  // vLLM-style servers take top_k; OpenAI and Azure reject it.
  if (target.provider !== 'openai-compatible') delete body.top_k;
  if (req.stream) body.stream_options = { ...req.stream_options, include_usage: true };
  const last = req.messages[req.messages.length - 1];
  // vLLM-style servers continue a trailing assistant message when asked to.
  if (target.prefill && last?.role === 'assistant') {
    body.continue_final_message = true;
    body.add_generation_prompt = false;
  }
  return post(endpointUrl(target, 'chat/completions'), target, body);
}

export function embeddingsRequest(req: EmbeddingRequest, target: UpstreamTarget): UpstreamRequest {
  return post(endpointUrl(target, 'embeddings'), target, { ...req, model: target.upstreamModel });
}

export function completionsRequest(req: CompletionRequest, target: UpstreamTarget): UpstreamRequest {
  const body: CompletionRequest = { ...req, model: target.upstreamModel };
  if (req.stream) body.stream_options = { ...req.stream_options, include_usage: true };
  return post(endpointUrl(target, 'completions'), target, body);
}

function post(url: string, target: UpstreamTarget, body: object): UpstreamRequest {
  return { method: 'POST', url, headers: authHeaders(target), body: JSON.stringify(body) };
}

/** Keys Gantry carries between formats (Anthropic thinking, caching) that OpenAI would reject. */
const MESSAGE_EXTENSIONS = ['reasoning_content', 'thinking_blocks', 'is_error', 'cache_control'] as const;

function stripInternal(message: ChatMessage): ChatMessage {
  let out: ChatMessage | undefined;
  for (const key of MESSAGE_EXTENSIONS) {
    if (message[key] === undefined) continue;
    out ??= { ...message };
    delete out[key];
  }
  if (Array.isArray(message.content) && message.content.some((p) => 'cache_control' in p)) {
    out ??= { ...message };
    out.content = message.content.map((p) => {
      if (!('cache_control' in p)) return p;
      const { cache_control: _omit, ...rest } = p;
      return rest as typeof p;
    });
  }
  return out ?? message;
}

function stripTools(tools: ChatRequest['tools']): ChatRequest['tools'] {
  if (!tools?.some((t) => 'cache_control' in t)) return tools;
  return tools.map((t) => {
    const { cache_control: _omit, ...rest } = t as typeof t & { cache_control?: unknown };
    return rest;
  });
}
