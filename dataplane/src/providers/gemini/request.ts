/** Canonical chat request → Gemini generateContent / streamGenerateContent call. */
import { foreignRequest } from '../../formats/anthropic/native.ts';
import type { ChatRequest, ToolChoice, ToolDefinition } from '../../formats/openai/types.ts';
import type { UpstreamRequest, UpstreamTarget } from '../types.ts';
import { geminiHeaders, geminiUrl } from './endpoint.ts';
import { toGeminiConversation } from './messages.ts';
import { toGeminiSchema } from './schema.ts';
import type { GeminiFunctionDeclaration, GeminiGenerateRequest, GeminiGenerationConfig } from './wire.ts';

/**
 * `reasoning_effort` → `thinkingConfig.thinkingBudget` (tokens). High is the largest budget
 * every 2.5 thinking model accepts; other effort values leave the model's default.
 */
export const THINKING_BUDGETS: Readonly<Record<string, number>> = {
  low: 1024,
  medium: 8192,
  high: 24576,
};

export function chatRequest(req: ChatRequest, target: UpstreamTarget): UpstreamRequest {
  req = foreignRequest(req, target.provider, false);
  return {
    method: 'POST',
    url: geminiUrl(target, req.stream === true ? 'streamGenerateContent' : 'generateContent'),
    headers: geminiHeaders(target),
    body: JSON.stringify(toGeminiRequest(req)),
  };
}

export function toGeminiRequest(req: ChatRequest): GeminiGenerateRequest {
  const { systemInstruction, contents } = toGeminiConversation(req.messages);
  const out: GeminiGenerateRequest = { contents };
  if (systemInstruction) out.systemInstruction = systemInstruction;
  if (req.tools && req.tools.length > 0) {
    out.tools = [{ functionDeclarations: req.tools.map((tool, i) => toDeclaration(tool, i)) }];
    const toolConfig = toToolConfig(req.tool_choice);
    if (toolConfig) out.toolConfig = toolConfig;
  }
  const generationConfig = toGenerationConfig(req);
  if (Object.keys(generationConfig).length > 0) out.generationConfig = generationConfig;
  return out;
}

function toDeclaration(tool: ToolDefinition, index: number): GeminiFunctionDeclaration {
  const decl: GeminiFunctionDeclaration = { name: tool.function.name };
  if (tool.function.description !== undefined) decl.description = tool.function.description;
  const params = tool.function.parameters;
  // Gemini rejects an OBJECT schema with no properties: a parameterless function omits it.
  if (params && isNonEmptyObject(params.properties))
    decl.parameters = toGeminiSchema(params, `tools[${index}].function.parameters`);
  return decl;
}

const isNonEmptyObject = (v: unknown): boolean =>
  typeof v === 'object' && v !== null && Object.keys(v).length > 0;

function toToolConfig(choice: ToolChoice | undefined): GeminiGenerateRequest['toolConfig'] {
  if (choice === undefined) return undefined;
  if (choice === 'auto') return { functionCallingConfig: { mode: 'AUTO' } };
  if (choice === 'none') return { functionCallingConfig: { mode: 'NONE' } };
  if (choice === 'required') return { functionCallingConfig: { mode: 'ANY' } };
  return { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: [choice.function.name] } };
}

function toGenerationConfig(req: ChatRequest): GeminiGenerationConfig {
  const cfg: GeminiGenerationConfig = {};
  if (req.temperature !== undefined) cfg.temperature = req.temperature;
  if (req.top_p !== undefined) cfg.topP = req.top_p;
  const maxTokens = req.max_completion_tokens ?? req.max_tokens;
  if (maxTokens !== undefined) cfg.maxOutputTokens = maxTokens;
  if (req.stop !== undefined) cfg.stopSequences = typeof req.stop === 'string' ? [req.stop] : req.stop;
  if (req.presence_penalty !== undefined) cfg.presencePenalty = req.presence_penalty;
  if (req.frequency_penalty !== undefined) cfg.frequencyPenalty = req.frequency_penalty;
  if (req.n !== undefined && req.n !== 1) cfg.candidateCount = req.n;
  if (req.seed !== undefined) cfg.seed = req.seed;

  const format = req.response_format;
  if (format?.type === 'json_object') cfg.responseMimeType = 'application/json';
  if (format?.type === 'json_schema') {
    cfg.responseMimeType = 'application/json';
    const spec = format.json_schema;
    const schema =
      typeof spec === 'object' && spec !== null ? (spec as { schema?: unknown }).schema : undefined;
    if (schema !== undefined)
      cfg.responseSchema = toGeminiSchema(schema, 'response_format.json_schema.schema');
  }

  const budget = req.reasoning_effort !== undefined ? THINKING_BUDGETS[req.reasoning_effort] : undefined;
  // The caller asked for reasoning: return Gemini's thought summaries as reasoning_content.
  if (budget !== undefined) cfg.thinkingConfig = { thinkingBudget: budget, includeThoughts: true };
  return cfg;
}
