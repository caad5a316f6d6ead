/**
 * The numeric caps each OpenAI-wire flavour enforces on logprobs. OpenAI itself allows legacy
 * completions at most 5 alternatives a token and chat at most 20 (`top_logprobs` 0–20), and
 * answers anything outside with its range error naming the parameter; vLLM keeps its default
 * `max_logprobs` (20) for both. Caught here so a gateway test sees the 400 a real upstream
 * sends, not an answer no real upstream would give.
 */
import { openaiError } from './openai-errors.ts';
import type { ErrorReply } from './types.ts';

/** Which server the OpenAI wire is spoken as: a path with a `/vllm/` segment is vLLM. */
export type OpenaiFlavour = 'openai' | 'vllm';

export const flavourOf = (pathname: string): OpenaiFlavour =>
  pathname.includes('/vllm/') ? 'vllm' : 'openai';

/** OpenAI's caps (its API reference): legacy `logprobs` 0–5, chat `top_logprobs` 0–20. */
export const OPENAI_MAX_LEGACY_LOGPROBS = 5;
export const OPENAI_MAX_TOP_LOGPROBS = 20;
/** vLLM's default `max_logprobs`. */
export const VLLM_MAX_LOGPROBS = 20;

/**
 * OpenAI's 400 for an integer outside its range: type `invalid_request_error`, the parameter
 * in `param`, and a code saying which bound it crossed.
 */
export function integerOutOfRange(param: string, value: number, min: number, max: number): ErrorReply {
  const above = value > max;
  return openaiError(
    400,
    `Invalid '${param}': integer ${above ? 'above maximum' : 'below minimum'} value. ` +
      `Expected a value ${above ? `<= ${max}` : `>= ${min}`}, but got ${value} instead.`,
    'invalid_request_error',
    above ? 'integer_above_max_value' : 'integer_below_min_value',
    param,
  );
}

/** `body[param]` checked against [min, max] when it is a number (other types are not this check's). */
function inRange(
  body: Record<string, unknown>,
  param: string,
  min: number,
  max: number,
): ErrorReply | undefined {
  const v = body[param];
  if (typeof v !== 'number' || (v >= min && v <= max)) return undefined;
  return integerOutOfRange(param, v, min, max);
}

/** Chat's `top_logprobs` as OpenAI caps it (vLLM's cap is the same number). */
export function chatLogprobsCap(body: Record<string, unknown>): ErrorReply | undefined {
  return inRange(body, 'top_logprobs', 0, OPENAI_MAX_TOP_LOGPROBS);
}

/** Legacy completions' `logprobs`: OpenAI's 5, or vLLM's 20 refused in vLLM's own words. */
export function legacyLogprobsCap(
  body: Record<string, unknown>,
  flavour: OpenaiFlavour,
): ErrorReply | undefined {
  if (flavour === 'openai') return inRange(body, 'logprobs', 0, OPENAI_MAX_LEGACY_LOGPROBS);
  // As vLLM at its default `max_logprobs`: more alternatives than it keeps are refused, not cut.
  if (typeof body.logprobs === 'number' && body.logprobs > VLLM_MAX_LOGPROBS)
    return openaiError(
      400,
      `logprobs ${body.logprobs} is more than the ${VLLM_MAX_LOGPROBS} alternatives this server returns`,
      'invalid_request_error',
      null,
      'logprobs',
    );
  return undefined;
}
