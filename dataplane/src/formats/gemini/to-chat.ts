/**
 * A Gemini generateContent body, as a client sends it to Gantry, → the canonical chat
 * request (the reverse of the Gemini provider adapter). Fields the canonical request cannot
 * carry are refused with a 400 naming them, never dropped; the exceptions are listed in
 * docs/decisions.md (safetySettings: Gantry's own guardrails apply instead).
 */
import { invalidParam } from '../../errors.ts';
import type {
  ChatMessage,
  ChatRequest,
  ContentPart,
  ToolCall,
  ToolChoice,
  ToolDefinition,
} from '../openai/types.ts';
import type {
  GeminiContent,
  GeminiFunctionDeclaration,
  GeminiGenerateRequest,
  GeminiGenerationConfig,
  GeminiPart,
} from '../../providers/gemini/wire.ts';

export interface GeminiEdgeRequest extends Omit<GeminiGenerateRequest, 'tools'> {
  model?: string;
  tools?: Array<{ functionDeclarations?: GeminiFunctionDeclaration[]; [key: string]: unknown }>;
  safetySettings?: unknown;
  cachedContent?: unknown;
  [key: string]: unknown;
}

/** Thinking budgets → the effort that asks for at least as much (the adapter's table, reversed). */
export function effortOf(budget: number | undefined): string | undefined {
  if (budget === undefined || budget < 0) return undefined; // -1: the model decides
  if (budget === 0) return 'minimal';
  if (budget <= 1024) return 'low';
  if (budget <= 8192) return 'medium';
  return 'high';
}

/** Gemini's upper-case OpenAPI type names → JSON Schema's. */
export function toJsonSchema(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(toJsonSchema);
  if (typeof schema !== 'object' || schema === null) return schema;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(schema)) {
    if (k === 'type' && typeof v === 'string') out[k] = v.toLowerCase();
    else if (k === 'nullable') continue;
    else out[k] = toJsonSchema(v);
  }
  if ((schema as Record<string, unknown>).nullable === true && typeof out.type === 'string')
    out.type = [out.type, 'null'];
  return out;
}

function mediaUrl(part: GeminiPart, where: string): ContentPart {
  if (part.inlineData) {
    const { mimeType, data } = part.inlineData;
    const url = `data:${mimeType};base64,${data}`;
    if (mimeType.startsWith('image/')) return { type: 'image_url', image_url: { url } };
    if (mimeType === 'application/pdf')
      return { type: 'file', file: { file_data: url, filename: 'document.pdf' } };
    throw invalidParam(
      `${where}.inlineData.mimeType`,
      `${mimeType} is not supported; send an image or a PDF`,
    );
  }
  const file = part.fileData!;
  if (!/^https?:\/\//i.test(file.fileUri))
    throw invalidParam(
      `${where}.fileData.fileUri`,
      'must be an http(s) URL (Gemini Files API uploads are not reachable from other providers)',
    );
  return { type: 'image_url', image_url: { url: file.fileUri } };
}

/** Calls the model made and their ids: Gemini has none, the canonical format needs them paired. */
class CallLedger {
  private n = 0;
  private readonly open: ToolCall[] = [];

  issue(name: string, args: Record<string, unknown> | undefined): ToolCall {
    const call: ToolCall = {
      id: `call_${this.n++}`,
      type: 'function',
      function: { name, arguments: JSON.stringify(args ?? {}) },
    };
    this.open.push(call);
    return call;
  }

  /** The earliest unanswered call of that name answers a functionResponse. */
  answer(name: string, where: string): string {
    const i = this.open.findIndex((c) => c.function.name === name);
    if (i < 0) throw invalidParam(`${where}.functionResponse.name`, `no earlier functionCall named ${name}`);
    return this.open.splice(i, 1)[0]!.id;
  }
}

function userTurn(content: GeminiContent, where: string, ledger: CallLedger): ChatMessage[] {
  const out: ChatMessage[] = [];
  const parts: ContentPart[] = [];
  content.parts.forEach((part, j) => {
    const at = `${where}.parts[${j}]`;
    if (part.functionResponse) {
      const id = ledger.answer(part.functionResponse.name, at);
      out.push({
        role: 'tool',
        tool_call_id: id,
        content: JSON.stringify(part.functionResponse.response ?? {}),
      });
    } else if (typeof part.text === 'string') parts.push({ type: 'text', text: part.text });
    else if (part.inlineData || part.fileData) parts.push(mediaUrl(part, at));
    else throw invalidParam(at, 'a user part needs text, inlineData, fileData or functionResponse');
  });
  if (parts.length > 0)
    out.push({
      role: 'user',
      content: parts.every((p) => p.type === 'text')
        ? parts.map((p) => (p as { text: string }).text).join('')
        : parts,
    });
  return out;
}

function modelTurn(content: GeminiContent, where: string, ledger: CallLedger): ChatMessage {
  let text = '';
  const calls: ToolCall[] = [];
  content.parts.forEach((part, j) => {
    if (part.functionCall) calls.push(ledger.issue(part.functionCall.name, part.functionCall.args));
    else if (part.thought === true)
      return; // the model's own summary of its thinking: not replayed
    else if (typeof part.text === 'string') text += part.text;
    else throw invalidParam(`${where}.parts[${j}]`, 'a model part needs text or functionCall');
  });
  const msg: ChatMessage = { role: 'assistant', content: text === '' && calls.length > 0 ? null : text };
  if (calls.length > 0) msg.tool_calls = calls;
  return msg;
}

function tools(req: GeminiEdgeRequest): ToolDefinition[] | undefined {
  if (!req.tools) return undefined;
  const out: ToolDefinition[] = [];
  req.tools.forEach((tool, i) => {
    const other = Object.keys(tool).filter((k) => k !== 'functionDeclarations');
    if (other.length > 0)
      throw invalidParam(
        `tools[${i}].${other[0]}`,
        'only functionDeclarations can be served by every provider',
      );
    for (const f of tool.functionDeclarations ?? [])
      out.push({
        type: 'function',
        function: {
          name: f.name,
          ...(f.description !== undefined && { description: f.description }),
          ...(f.parameters !== undefined && {
            parameters: toJsonSchema(f.parameters) as Record<string, unknown>,
          }),
        },
      });
  });
  return out.length > 0 ? out : undefined;
}

function toolChoice(req: GeminiEdgeRequest): ToolChoice | undefined {
  const cfg = req.toolConfig?.functionCallingConfig;
  if (!cfg) return undefined;
  if (cfg.mode === 'NONE') return 'none';
  if (cfg.mode === 'AUTO') return 'auto';
  const allowed = cfg.allowedFunctionNames ?? [];
  if (allowed.length === 1) return { type: 'function', function: { name: allowed[0]! } };
  if (allowed.length > 1)
    throw invalidParam(
      'toolConfig.functionCallingConfig.allowedFunctionNames',
      'only one name can be forced across providers; offer only the allowed tools instead',
    );
  return 'required';
}

function generation(cfg: GeminiGenerationConfig | undefined): Partial<ChatRequest> {
  if (!cfg) return {};
  const out: Partial<ChatRequest> = {};
  if (cfg.temperature !== undefined) out.temperature = cfg.temperature;
  if (cfg.topP !== undefined) out.top_p = cfg.topP;
  if (cfg.maxOutputTokens !== undefined) out.max_tokens = cfg.maxOutputTokens;
  if (cfg.stopSequences !== undefined) out.stop = cfg.stopSequences;
  if (cfg.presencePenalty !== undefined) out.presence_penalty = cfg.presencePenalty;
  if (cfg.frequencyPenalty !== undefined) out.frequency_penalty = cfg.frequencyPenalty;
  if (cfg.candidateCount !== undefined) out.n = cfg.candidateCount;
  if (cfg.seed !== undefined) out.seed = cfg.seed;
  const topK = (cfg as { topK?: number }).topK;
  if (topK !== undefined) out.top_k = topK;
  const effort = effortOf(cfg.thinkingConfig?.thinkingBudget);
  if (effort !== undefined) out.reasoning_effort = effort;
  if (cfg.responseSchema !== undefined)
    out.response_format = {
      type: 'json_schema',
      json_schema: { name: 'response', schema: toJsonSchema(cfg.responseSchema) },
    };
  else if (cfg.responseMimeType === 'application/json') out.response_format = { type: 'json_object' };
  else if (cfg.responseMimeType !== undefined && cfg.responseMimeType !== 'text/plain')
    throw invalidParam(
      'generationConfig.responseMimeType',
      `${cfg.responseMimeType} is not supported; use text/plain or application/json`,
    );
  return out;
}

export function geminiToChat(req: GeminiEdgeRequest, model: string): ChatRequest {
  if (req.cachedContent !== undefined)
    throw invalidParam('cachedContent', 'Gemini context caches are not reachable through Gantry');
  const messages: ChatMessage[] = [];
  const system = req.systemInstruction?.parts.map((p) => p.text ?? '').join('') ?? '';
  if (system !== '') messages.push({ role: 'system', content: system });
  const ledger = new CallLedger();
  req.contents.forEach((content, i) => {
    const where = `contents[${i}]`;
    if (content.role === 'model') messages.push(modelTurn(content, where, ledger));
    else messages.push(...userTurn(content, where, ledger));
  });
  const chat: ChatRequest = { model, messages, ...generation(req.generationConfig) };
  const t = tools(req);
  if (t) chat.tools = t;
  const choice = toolChoice(req);
  if (choice !== undefined) chat.tool_choice = choice;
  return chat;
}
