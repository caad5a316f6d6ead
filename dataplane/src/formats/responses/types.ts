/**
 * The OpenAI Responses API wire shapes Gantry serves: the request fields it honours, the
 * input items it can translate to chat messages, and the response object it returns.
 */

export type InputRole = 'user' | 'system' | 'developer' | 'assistant';

/** Content parts of an input message (`output_text`/`refusal` appear in replayed assistant turns). */
export type InputPart =
  | { type: 'input_text'; text: string }
  | { type: 'output_text'; text: string; annotations?: unknown[] }
  | { type: 'refusal'; refusal: string }
  | { type: 'input_image'; image_url?: string; file_id?: string; detail?: 'low' | 'high' | 'auto' }
  | { type: 'input_file'; file_data?: string; file_id?: string; file_url?: string; filename?: string }
  | { type: 'input_audio'; input_audio: { data: string; format: string } };

export interface MessageItem {
  type?: 'message';
  id?: string;
  role: InputRole;
  content: string | InputPart[];
  status?: string;
}

export interface FunctionCallItem {
  type: 'function_call';
  id?: string;
  call_id: string;
  name: string;
  arguments: string;
  status?: string;
}

export interface FunctionCallOutputItem {
  type: 'function_call_output';
  id?: string;
  call_id: string;
  output: string | InputPart[];
}

export interface ReasoningItem {
  type: 'reasoning';
  id?: string;
  summary?: { type: 'summary_text'; text: string }[];
  encrypted_content?: string | null;
}

/** Produced by /v1/responses/compact; its content is Gantry's own summary (see compact.ts). */
export interface CompactionItem {
  type: 'compaction';
  id?: string;
  encrypted_content: string;
}

export type InputItem =
  MessageItem | FunctionCallItem | FunctionCallOutputItem | ReasoningItem | CompactionItem;

export interface FunctionTool {
  type: 'function';
  name: string;
  description?: string | null;
  parameters?: Record<string, unknown> | null;
  strict?: boolean | null;
}

export type ResponsesToolChoice =
  | 'auto'
  | 'none'
  | 'required'
  | { type: 'function'; name: string }
  | { type: string; [key: string]: unknown };

export type TextFormat =
  | { type: 'text' }
  | { type: 'json_object' }
  | {
      type: 'json_schema';
      name: string;
      schema: Record<string, unknown>;
      description?: string;
      strict?: boolean | null;
    };

export interface ResponsesRequest {
  model: string;
  input?: string | InputItem[];
  instructions?: string | null;
  previous_response_id?: string | null;
  max_output_tokens?: number | null;
  temperature?: number | null;
  top_p?: number | null;
  tools?: FunctionTool[];
  tool_choice?: ResponsesToolChoice;
  parallel_tool_calls?: boolean | null;
  text?: { format?: TextFormat; verbosity?: string | null } | null;
  reasoning?: { effort?: string | null; summary?: string | null } | null;
  store?: boolean | null;
  stream?: boolean | null;
  metadata?: Record<string, string> | null;
  user?: string;
  [key: string]: unknown;
}

export interface OutputText {
  type: 'output_text';
  text: string;
  annotations: unknown[];
  logprobs?: unknown[];
}
export interface OutputRefusal {
  type: 'refusal';
  refusal: string;
}

export interface OutputMessage {
  type: 'message';
  id: string;
  status: 'in_progress' | 'completed' | 'incomplete';
  role: 'assistant';
  content: (OutputText | OutputRefusal)[];
}

export interface OutputFunctionCall {
  type: 'function_call';
  id: string;
  call_id: string;
  name: string;
  arguments: string;
  status: 'in_progress' | 'completed' | 'incomplete';
}

export interface OutputReasoning {
  type: 'reasoning';
  id: string;
  summary: { type: 'summary_text'; text: string }[];
}

export type OutputItem = OutputMessage | OutputFunctionCall | OutputReasoning;

export interface ResponsesUsage {
  input_tokens: number;
  input_tokens_details: { cached_tokens: number };
  output_tokens: number;
  output_tokens_details: { reasoning_tokens: number };
  total_tokens: number;
}

export type ResponseStatus = 'completed' | 'incomplete' | 'in_progress' | 'failed';

export interface ResponseObject {
  id: string;
  object: 'response';
  created_at: number;
  status: ResponseStatus;
  error: { code: string; message: string } | null;
  incomplete_details: { reason: 'max_output_tokens' | 'content_filter' } | null;
  instructions: string | null;
  max_output_tokens: number | null;
  model: string;
  output: OutputItem[];
  parallel_tool_calls: boolean;
  previous_response_id: string | null;
  reasoning: { effort: string | null; summary: string | null };
  store: boolean;
  temperature: number | null;
  text: { format: TextFormat };
  tool_choice: ResponsesToolChoice;
  tools: FunctionTool[];
  top_p: number | null;
  truncation: 'disabled' | 'auto';
  usage: ResponsesUsage | null;
  user: string | null;
  metadata: Record<string, string>;
}
