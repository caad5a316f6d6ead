/** Error bodies of OpenAI and Azure OpenAI, as their APIs shape them. */
import { randomId } from './behaviour.ts';
import type { ErrorFormat, ErrorReply, StatusDetail } from './types.ts';

export function openaiError(
  status: number,
  message: string,
  type: string | null,
  code: string | null = null,
  param: string | null = null,
  headers?: Record<string, string>,
): ErrorReply {
  return { status, body: { error: { message, type, param, code } }, headers };
}

const CONTEXT_MESSAGE =
  "This model's maximum context length is 128000 tokens. However, your messages resulted in 131072 tokens. " +
  'Please reduce the length of the messages.';

function retryHeaders(seconds: number | undefined, azure: boolean): Record<string, string> {
  if (seconds === undefined) return {};
  const h: Record<string, string> = { 'retry-after': String(seconds) };
  if (azure) h['retry-after-ms'] = String(seconds * 1000);
  else h['x-ratelimit-reset-requests'] = `${seconds}s`;
  return h;
}

/**
 * OpenAI's token-rate 429 (Groq sends the same body with 413): the limit and the request's
 * size, plus what the window already used when the refusal is about load.
 */
function tokenRateError(
  f: Parameters<ErrorFormat['status']>[0],
  tokens: NonNullable<StatusDetail['tokens']>,
  headers: Record<string, string>,
): ErrorReply {
  const model = f.model ?? 'gpt-4o';
  const where = `for ${model} in organization org-fake on tokens per min (TPM)`;
  const message =
    tokens.used === undefined
      ? `Request too large ${where}: Limit ${tokens.limit}, Requested ${tokens.requested}. ` +
        'Reduce the input or output tokens to run this request.'
      : `Rate limit reached ${where}: Limit ${tokens.limit}, Used ${tokens.used}, Requested ${tokens.requested}. ` +
        `Please try again in ${f.retryAfterSeconds ?? 1}s.`;
  return openaiError(f.status, message, 'tokens', 'rate_limit_exceeded', null, headers);
}

function openaiStatus(f: Parameters<ErrorFormat['status']>[0]): ErrorReply {
  const headers = retryHeaders(f.retryAfterSeconds, false);
  const { status } = f;
  if (f.tokens) return tokenRateError(f, f.tokens, headers);
  if (f.missing !== undefined)
    return openaiError(
      status,
      `No such File object: ${f.missing}`,
      'invalid_request_error',
      f.code ?? null,
      f.param ?? null,
      headers,
    );
  if (f.code === 'context_length_exceeded') {
    return openaiError(
      status,
      f.message ?? CONTEXT_MESSAGE,
      'invalid_request_error',
      'context_length_exceeded',
      'messages',
      headers,
    );
  }
  if (f.code === 'content_policy') {
    const msg = f.message ?? 'The request was rejected because it was flagged by the content policy.';
    return openaiError(status, msg, 'invalid_request_error', 'content_filter', 'prompt', headers);
  }
  if (f.code === 'overloaded') {
    const msg = f.message ?? 'The server is currently overloaded with other requests. Please retry later.';
    return openaiError(status, msg, 'server_error', null, null, headers);
  }
  const code = f.code ?? null;
  if (status === 401) {
    const msg = f.message ?? 'Incorrect API key provided: sk-fake. Check the key and try again.';
    return openaiError(status, msg, 'invalid_request_error', code ?? 'invalid_api_key', null, headers);
  }
  if (status === 404) {
    // Without a message it is the unknown model's 404; with one, the fault says what is missing.
    if (f.message === undefined)
      return openaiError(
        status,
        'The model does not exist or you do not have access to it.',
        'invalid_request_error',
        code ?? 'model_not_found',
        f.param ?? null,
        headers,
      );
    return openaiError(status, f.message, 'invalid_request_error', code, f.param ?? null, headers);
  }
  if (status === 429) {
    const msg = f.message ?? 'Rate limit reached for requests. Please try again later.';
    return openaiError(status, msg, 'requests', code ?? 'rate_limit_exceeded', null, headers);
  }
  if (status >= 500) {
    const msg = f.message ?? 'The server had an error while processing your request. Sorry about that!';
    return openaiError(status, msg, 'server_error', code, null, headers);
  }
  return openaiError(
    status,
    f.message ?? 'Invalid request.',
    'invalid_request_error',
    code,
    f.param ?? null,
    headers,
  );
}

export const openaiErrors: ErrorFormat = {
  unauthorized: () =>
    openaiError(
      401,
      "You didn't provide an API key. Send it in the Authorization header as `Bearer <key>`.",
      'invalid_request_error',
    ),
  invalidJson: () =>
    openaiError(
      400,
      'We could not parse the JSON body of your request. The API expects a JSON payload.',
      'invalid_request_error',
    ),
  status: openaiStatus,
  streamError: (f) => `data: ${JSON.stringify(openaiStatus(f).body)}\n\n`,
};

const SAFE = { filtered: false, severity: 'safe' };
/** Azure annotates prompts and choices with its content filter verdicts. */
export const AZURE_FILTER_RESULTS = { hate: SAFE, self_harm: SAFE, sexual: SAFE, violence: SAFE };
const FLAGGED = { ...AZURE_FILTER_RESULTS, violence: { filtered: true, severity: 'high' } };

function azureStatus(f: Parameters<ErrorFormat['status']>[0]): ErrorReply {
  const headers = retryHeaders(f.retryAfterSeconds, true);
  const { status } = f;
  if (f.code === 'context_length_exceeded') {
    return openaiError(
      status,
      f.message ?? CONTEXT_MESSAGE,
      'invalid_request_error',
      'context_length_exceeded',
      'messages',
      headers,
    );
  }
  if (f.code === 'content_policy') {
    const message =
      f.message ??
      "The response was filtered due to the prompt triggering Azure OpenAI's content management policy.";
    const error = {
      message,
      type: null,
      param: 'prompt',
      code: 'content_filter',
      status,
      innererror: { code: 'ResponsibleAIPolicyViolation', content_filter_result: FLAGGED },
    };
    return { status, body: { error }, headers };
  }
  let message = f.message ?? 'The service encountered an error.';
  if (!f.message && status === 429) {
    message =
      'Requests to the ChatCompletions_Create Operation have exceeded the rate limit of your current pricing tier. ' +
      `Please retry after ${f.retryAfterSeconds ?? 1} seconds.`;
  } else if (!f.message && f.code === 'overloaded') {
    message = 'The service is temporarily unable to process your request. Please try again later.';
  }
  const code = f.code && f.code !== 'overloaded' ? f.code : String(status);
  return { status, body: { error: { code, message } }, headers };
}

export const azureErrors: ErrorFormat = {
  unauthorized: () => ({
    status: 401,
    body: {
      error: {
        code: '401',
        message:
          'Access denied due to invalid subscription key or wrong API endpoint. Provide a valid key for an ' +
          'active subscription and use the correct regional API endpoint for your resource.',
      },
    },
  }),
  invalidJson: openaiErrors.invalidJson,
  status: azureStatus,
  streamError: (f) => `data: ${JSON.stringify(azureStatus(f).body)}\n\n`,
};

export function requestIdHeaders(): Record<string, string> {
  return { 'x-request-id': randomId('req_', 32) };
}
