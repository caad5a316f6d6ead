/**
 * The canonical wire shapes inside Gantry: the OpenAI Chat Completions format. Every client
 * format is translated to these and every provider adapter translates from them, so the
 * pipeline and router speak exactly one dialect.
 */

export interface TextPart {
  type: 'text';
  text: string;
}
export interface ImagePart {
  type: 'image_url';
  image_url: { url: string; detail?: 'low' | 'high' | 'auto' };
}
/** Other OpenAI part kinds (input_audio, file, ...) pass through untouched. */
export interface OtherPart {
  type: string;
  [key: string]: unknown;
}
export type ContentPart = TextPart | ImagePart | OtherPart;

export interface ToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

export interface ChatMessage {
  role: 'system' | 'developer' | 'user' | 'assistant' | 'tool';
  content?: string | ContentPart[] | null;
  name?: string;
  tool_calls?: ToolCall[];
  tool_call_id?: string;
  /** Provider reasoning text carried across formats (Anthropic thinking). */
  reasoning_content?: string;
  [key: string]: unknown;
}

export interface ToolDefinition {
  type: 'function';
  function: { name: string; description?: string; parameters?: Record<string, unknown>; strict?: boolean };
}

export type ToolChoice = 'auto' | 'none' | 'required' | { type: 'function'; function: { name: string } };

export interface ChatRequest {
  model: string;
  messages: ChatMessage[];
  temperature?: number;
  top_p?: number;
  max_tokens?: number;
  max_completion_tokens?: number;
  stream?: boolean;
  stream_options?: { include_usage?: boolean };
  stop?: string | string[];
  presence_penalty?: number;
  frequency_penalty?: number;
  tools?: ToolDefinition[];
  tool_choice?: ToolChoice;
  parallel_tool_calls?: boolean;
  response_format?: { type: string; [key: string]: unknown };
  reasoning_effort?: string;
  metadata?: Record<string, unknown>;
  user?: string;
  n?: number;
  seed?: number;
  /** Standard parameters Gantry does not act on pass through unchanged. */
  [key: string]: unknown;
}

export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  prompt_tokens_details?: { cached_tokens?: number };
  completion_tokens_details?: { reasoning_tokens?: number };
}

export type FinishReason = 'stop' | 'length' | 'tool_calls' | 'content_filter' | 'function_call';

export interface ChatChoice {
  index: number;
  message: {
    role: 'assistant';
    content: string | null;
    tool_calls?: ToolCall[];
    reasoning_content?: string;
    refusal?: string | null;
  };
  finish_reason: FinishReason | null;
  logprobs?: unknown;
}

export interface ChatCompletion {
  id: string;
  object: 'chat.completion';
  created: number;
  model: string;
  choices: ChatChoice[];
  usage?: Usage;
  system_fingerprint?: string | null;
}

export interface ToolCallDelta {
  index: number;
  id?: string;
  type?: 'function';
  function?: { name?: string; arguments?: string };
}

export interface ChunkChoice {
  index: number;
  delta: {
    role?: 'assistant';
    content?: string | null;
    tool_calls?: ToolCallDelta[];
    reasoning_content?: string;
    refusal?: string | null;
  };
  finish_reason: FinishReason | null;
  logprobs?: unknown;
}

export interface ChatChunk {
  id: string;
  object: 'chat.completion.chunk';
  created: number;
  model: string;
  choices: ChunkChoice[];
  usage?: Usage | null;
  system_fingerprint?: string | null;
}

export interface EmbeddingRequest {
  model: string;
  input: string | string[] | number[] | number[][];
  dimensions?: number;
  encoding_format?: 'float' | 'base64';
  user?: string;
  [key: string]: unknown;
}

export interface EmbeddingResponse {
  object: 'list';
  data: { object: 'embedding'; index: number; embedding: number[] | string }[];
  model: string;
  usage: { prompt_tokens: number; total_tokens: number };
}

export interface CompletionRequest {
  model: string;
  prompt: string | string[];
  max_tokens?: number;
  /** Completions per prompt. */
  n?: number;
  /** Candidates generated server-side per prompt (all billed), the best `n` returned. */
  best_of?: number;
  stream?: boolean;
  stream_options?: { include_usage?: boolean };
  [key: string]: unknown;
}

export interface CompletionResponse {
  id: string;
  object: 'text_completion';
  created: number;
  model: string;
  choices: { index: number; text: string; finish_reason: FinishReason | null; logprobs?: unknown }[];
  usage?: Usage;
}

export interface ModelList {
  object: 'list';
  data: { id: string; object: 'model'; created: number; owned_by: string }[];
}
