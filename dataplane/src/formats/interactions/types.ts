/**
 * The Gemini Interactions API wire shapes Gantry serves (`POST /v1/interactions`): the
 * request fields it honours, the content kinds it can translate to chat, and the
 * interaction object it returns.
 */

export type InteractionContent =
  | { type: 'text'; text: string }
  | { type: 'image'; data?: string; uri?: string; mime_type?: string }
  | { type: 'function_call'; id: string; name: string; arguments: Record<string, unknown> }
  | { type: 'function_result'; call_id: string; name?: string; result: unknown };

export interface InteractionTurn {
  role: 'user' | 'model';
  content: string | InteractionContent[];
}

export interface InteractionTool {
  type: string;
  name?: string;
  description?: string;
  parameters?: Record<string, unknown>;
}

export interface GenerationConfig {
  temperature?: number;
  top_p?: number;
  max_output_tokens?: number;
  stop_sequences?: string[];
  seed?: number;
  thinking_level?: string;
}

export interface InteractionsRequest {
  model: string;
  input: string | InteractionContent[] | InteractionTurn[];
  system_instruction?: string;
  previous_interaction_id?: string;
  tools?: InteractionTool[];
  generation_config?: GenerationConfig;
  /** A JSON schema the answer must satisfy. */
  response_format?: Record<string, unknown>;
  response_mime_type?: string;
  stream?: boolean;
  store?: boolean;
  background?: boolean;
  agent?: string;
}

export interface InteractionUsage {
  total_input_tokens: number;
  total_output_tokens: number;
  total_tokens: number;
  total_cached_tokens?: number;
  total_thought_tokens?: number;
}

export type InteractionStatus = 'in_progress' | 'completed' | 'requires_action' | 'failed';

export interface Interaction {
  id: string;
  object: 'interaction';
  model: string;
  role: 'model';
  status: InteractionStatus;
  outputs: InteractionContent[];
  usage?: InteractionUsage;
  created: string;
  updated: string;
  previous_interaction_id?: string;
}
