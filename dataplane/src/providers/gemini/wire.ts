/**
 * The subset of the Gemini API (generativelanguage v1beta) wire format this adapter speaks.
 * Response shapes are partial on purpose: every field may be missing in a stream event.
 */

export type GeminiRole = 'user' | 'model';

export interface GeminiFunctionCall {
  name: string;
  args?: Record<string, unknown>;
}

export interface GeminiPart {
  text?: string;
  /** Marks a text part as a thought summary (only with thinkingConfig.includeThoughts). */
  thought?: boolean;
  thoughtSignature?: string;
  inlineData?: { mimeType: string; data: string };
  fileData?: { mimeType?: string; fileUri: string };
  functionCall?: GeminiFunctionCall;
  functionResponse?: { name: string; response: Record<string, unknown> };
}

export interface GeminiContent {
  role?: GeminiRole;
  parts: GeminiPart[];
}

/** Gemini's Schema object: an OpenAPI 3.0 subset with upper-case type names. */
export type GeminiSchema = Record<string, unknown>;

export interface GeminiFunctionDeclaration {
  name: string;
  description?: string;
  parameters?: GeminiSchema;
}

export type FunctionCallingMode = 'AUTO' | 'ANY' | 'NONE';

export interface GeminiThinkingConfig {
  thinkingBudget?: number;
  includeThoughts?: boolean;
}

export interface GeminiGenerationConfig {
  temperature?: number;
  topP?: number;
  maxOutputTokens?: number;
  stopSequences?: string[];
  presencePenalty?: number;
  frequencyPenalty?: number;
  candidateCount?: number;
  seed?: number;
  responseMimeType?: string;
  responseSchema?: GeminiSchema;
  thinkingConfig?: GeminiThinkingConfig;
}

export interface GeminiGenerateRequest {
  contents: GeminiContent[];
  systemInstruction?: GeminiContent;
  tools?: { functionDeclarations: GeminiFunctionDeclaration[] }[];
  toolConfig?: { functionCallingConfig: { mode: FunctionCallingMode; allowedFunctionNames?: string[] } };
  generationConfig?: GeminiGenerationConfig;
}

export interface GeminiCandidate {
  content?: { role?: string; parts?: GeminiPart[] };
  finishReason?: string;
  index?: number;
}

export interface GeminiUsageMetadata {
  promptTokenCount?: number;
  candidatesTokenCount?: number;
  totalTokenCount?: number;
  thoughtsTokenCount?: number;
  cachedContentTokenCount?: number;
  toolUsePromptTokenCount?: number;
}

export interface GeminiGenerateResponse {
  candidates?: GeminiCandidate[];
  promptFeedback?: { blockReason?: string };
  usageMetadata?: GeminiUsageMetadata;
  modelVersion?: string;
  responseId?: string;
}

export interface GeminiErrorBody {
  error: { code?: number; message?: string; status?: string; details?: unknown[] };
}

export interface GeminiBatchEmbedRequest {
  requests: { model: string; content: { parts: { text: string }[] }; outputDimensionality?: number }[];
}

export interface GeminiBatchEmbedResponse {
  embeddings?: { values?: number[] }[];
}
