/**
 * Canonical chat request → Anthropic Messages request.
 *
 * Dropped because Anthropic has no equivalent: n (always one answer), seed,
 * presence_penalty, frequency_penalty, logit_bias, logprobs, top_logprobs, stream_options
 * (Anthropic always reports usage in streams), store, modalities, audio, prediction,
 * service_tier (different meaning at Anthropic), web_search_options, OpenAI `metadata`
 * (Gantry's own controls, e.g. cache_bypass), message `name`, image `detail`, tool `strict`.
 */
import type { ChatRequest, ToolChoice, ToolDefinition } from '../../formats/openai/types.ts';
import type {
  AnthropicMessagesRequest,
  AnthropicTextBlock,
  AnthropicTool,
  AnthropicToolChoice,
} from '../../formats/anthropic/types.ts';
import { nativeOf, nativeStructured } from '../../formats/anthropic/native.ts';
import { withCacheControl } from '../../formats/anthropic/util.ts';
import type { UpstreamRequest, UpstreamTarget } from '../types.ts';
import { toAnthropicConversation } from './messages.ts';

export const ANTHROPIC_VERSION = '2023-06-01';

/** Anthropic requires max_tokens; OpenAI callers usually omit it. */
export const DEFAULT_MAX_TOKENS = 4096;

/**
 * reasoning_effort → extended-thinking budget_tokens. Anthropic's minimum budget is 1024, so
 * `minimal` shares `low`'s budget; `none` (or any unknown value) means no thinking.
 */
export const REASONING_BUDGETS: Readonly<Record<string, number>> = {
  minimal: 1024,
  low: 1024,
  medium: 4096,
  high: 16384,
  xhigh: 32768,
};

const JSON_INSTRUCTION =
  'Respond only with a single valid JSON object. Do not add any text before or after it.';

/** OpenAI's temperature range is 0..2, Anthropic's 0..1: values above 1 are clamped, not scaled. */
export const clampTemperature = (t: number): number => Math.min(1, Math.max(0, t));

function stopSequences(stop: ChatRequest['stop']): string[] | undefined {
  if (stop === undefined || stop === null) return undefined;
  // Anthropic rejects stop sequences made only of whitespace; dropping them beats a 400.
  const list = (typeof stop === 'string' ? [stop] : stop).filter((s) => s.trim() !== '');
  return list.length > 0 ? list : undefined;
}

function tool(def: ToolDefinition): AnthropicTool {
  const out: AnthropicTool = {
    name: def.function.name,
    input_schema: def.function.parameters ?? { type: 'object', properties: {} },
    ...withCacheControl(def),
  };
  if (def.function.description !== undefined) out.description = def.function.description;
  return out;
}

function toolChoice(
  choice: ToolChoice | undefined,
  parallel: boolean | undefined,
): AnthropicToolChoice | undefined {
  const disable = parallel === false ? { disable_parallel_tool_use: true } : {};
  if (choice === 'none') return { type: 'none' };
  if (choice === 'required') return { type: 'any', ...disable };
  if (typeof choice === 'object') return { type: 'tool', name: choice.function.name, ...disable };
  if (choice === 'auto' || parallel === false) return { type: 'auto', ...disable };
  return undefined;
}

/**
 * The thinking budget, or undefined when thinking stays off. Anthropic refuses thinking
 * together with a prefill or a forced tool choice; the caller's explicit structure wins
 * over the (often router-injected) effort.
 */
export function thinkingBudget(
  effort: string | undefined,
  prefilled: boolean,
  choice: AnthropicToolChoice | undefined,
): number | undefined {
  if (effort === undefined || prefilled || choice?.type === 'any' || choice?.type === 'tool')
    return undefined;
  return REASONING_BUDGETS[effort];
}

function systemField(blocks: AnthropicTextBlock[]): AnthropicMessagesRequest['system'] {
  if (blocks.length === 0) return undefined;
  const only = blocks[0];
  return blocks.length === 1 && only !== undefined && only.cache_control === undefined ? only.text : blocks;
}

export function toAnthropicBody(
  req: ChatRequest,
  target: Pick<UpstreamTarget, 'upstreamModel' | 'prefill'>,
): AnthropicMessagesRequest {
  const conversation = toAnthropicConversation(req.messages, target.prefill);
  const system = [...conversation.system];
  const format = req.response_format?.type;
  if ((format === 'json_object' || format === 'json_schema') && !nativeStructured(req)) {
    // Anthropic has no JSON mode; an instruction is the portable way to get one.
    const schema = req.response_format?.['json_schema'];
    const text =
      format === 'json_schema' && schema !== undefined
        ? `${JSON_INSTRUCTION} It must match this JSON schema: ${JSON.stringify(schema)}`
        : JSON_INSTRUCTION;
    system.push({ type: 'text', text });
  }

  const hasTools = req.tools !== undefined && req.tools.length > 0;
  const choice = hasTools ? toolChoice(req.tool_choice, req.parallel_tool_calls) : undefined;
  const budget = thinkingBudget(req.reasoning_effort, conversation.prefilled, choice);
  let maxTokens = req.max_completion_tokens ?? req.max_tokens ?? DEFAULT_MAX_TOKENS;
  // OpenAI counts reasoning inside max_completion_tokens, Anthropic requires budget < max_tokens:
  // the answer keeps the room the caller asked for on top of the thinking budget.
  if (budget !== undefined && maxTokens <= budget) maxTokens += budget;

  const body: AnthropicMessagesRequest = {
    model: target.upstreamModel,
    max_tokens: maxTokens,
    messages: conversation.messages,
  };
  const systemValue = systemField(system);
  if (systemValue !== undefined) body.system = systemValue;
  const stops = stopSequences(req.stop);
  if (stops !== undefined) body.stop_sequences = stops;
  // With thinking on, Anthropic only accepts the default temperature, no top_k and top_p >= 0.95.
  // Newer models also refuse temperature and top_p together, so temperature wins.
  if (budget === undefined && typeof req.temperature === 'number')
    body.temperature = clampTemperature(req.temperature);
  if (
    typeof req.top_p === 'number' &&
    body.temperature === undefined &&
    (budget === undefined || req.top_p >= 0.95)
  )
    body.top_p = req.top_p;
  if (budget === undefined && typeof req['top_k'] === 'number') body.top_k = req['top_k'];
  if (hasTools) body.tools = (req.tools ?? []).map(tool);
  if (choice !== undefined) body.tool_choice = choice;
  if (budget !== undefined) body.thinking = { type: 'enabled', budget_tokens: budget };
  if (typeof req.user === 'string' && req.user !== '') body.metadata = { user_id: req.user };
  if (req.stream === true) body.stream = true;
  return body;
}

export function buildAnthropicRequest(req: ChatRequest, target: UpstreamTarget): UpstreamRequest {
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'anthropic-version': ANTHROPIC_VERSION,
    accept: req.stream === true ? 'text/event-stream' : 'application/json',
  };
  if (target.apiKey !== undefined) headers['x-api-key'] = target.apiKey;
  const native = nativeOf(req);
  if (native?.beta !== undefined) headers['anthropic-beta'] = native.beta;
  // The client's Anthropic-only fields, unchanged (formats/anthropic/native.ts).
  const body = { ...toAnthropicBody(req, target), ...native?.fields };
  return { method: 'POST', url: `${target.baseUrl}/messages`, headers, body: JSON.stringify(body) };
}
