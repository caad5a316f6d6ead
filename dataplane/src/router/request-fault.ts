/**
 * Whether an upstream's refusal was caused by the request itself rather than by the deployment:
 * a 429 (or 413) saying this one request is larger than the deployment's whole per-minute limit,
 * or a 403/404 naming something the request refers to (a file, a container) rather than the
 * deployment's own key, model or URL. Counted as the deployment's, such answers let one caller
 * cool down or eject a deployment every tenant shares; retried, they only repeat a request that
 * cannot succeed there. Pure: decides from the normalised error and the bytes sent.
 */
import type { UpstreamError } from '../providers/types.ts';

/** What was sent upstream for the attempt, as far as the decision needs it. */
export interface SentRequest {
  /** The request body as sent (JSON text for every call that can name a reference). */
  body: string | Uint8Array | undefined;
  /** The deployment's own model name: a 404 naming it blames the deployment. */
  upstreamModel: string;
  /** The upstream URL the attempt went to: a 404 naming its model segment blames the deployment. */
  url?: string | undefined;
}

/** A request larger than the deployment's limit: `limit`/`requested` when the provider says them. */
export interface TooLarge {
  limit?: number | undefined;
  requested?: number | undefined;
}

/** The reference a 403/404 blames: the field (as the upstream names it, or where the id was sent) and the id. */
export interface BlamedReference {
  param?: string | undefined;
  id?: string | undefined;
}

/**
 * "Limit 30000, Requested 50000" (OpenAI's and Groq's token-rate 429/413, "Used N" present or
 * not): the request alone needs more than the limit, so no wait makes room for it.
 */
const LIMIT_REQUESTED = /\bLimit:? ([\d,]{1,24})\b[^.]{0,64}?\bRequested:? ([\d,]{1,24})/i;

/**
 * How much of an upstream's message is read: every wording this file knows says what it says in
 * its first sentences, and an error body may be 64 KiB, on which an unbounded regex or a search
 * of the request per word of the message costs a tenth of a second to seconds.
 */
const SCAN_CHARS = 1024;

const count = (digits: string): number => Number(digits.replace(/,/g, ''));

/** The request is too large for the deployment whatever its load, or undefined. */
export function tooLarge(e: UpstreamError): TooLarge | undefined {
  if (e.status !== 429 && e.status !== 413) return undefined;
  // Anthropic's (Cloudflare's) 413 for a body over the endpoint's byte limit.
  if (e.status === 413 && e.code === 'request_too_large') return {};
  const m = LIMIT_REQUESTED.exec(e.message.slice(0, SCAN_CHARS));
  if (!m) return undefined;
  const limit = count(m[1]!);
  const requested = count(m[2]!);
  return limit > 0 && requested > limit ? { limit, requested } : undefined;
}

/**
 * "Limit 0, Requested N": the deployment's key has no quota for the model at all (a tier or
 * project without it), which no request fits however small: the deployment's fault, counted as
 * a key without the model is, not the request's size (failed over uncounted, it was never ejected).
 */
export function noQuota(e: UpstreamError): boolean {
  if (e.status !== 429 && e.status !== 413) return false;
  const m = LIMIT_REQUESTED.exec(e.message.slice(0, SCAN_CHARS));
  return m !== null && count(m[1]!) === 0;
}

/**
 * Codes that name the deployment's own failure whatever else the error says: its model,
 * deployment, key or region. Checked first, so an id or a param in the same error cannot
 * turn them into the caller's.
 */
const DEPLOYMENT_CODES = new Set([
  'model_not_found',
  'DeploymentNotFound',
  'invalid_api_key',
  'unsupported_country_region_territory',
  // google.rpc ErrorInfo reasons (googleapis.com and iam.googleapis.com domains) naming the
  // deployment's key, project, billing or credentials.
  'API_KEY_INVALID',
  'SERVICE_DISABLED',
  'BILLING_DISABLED',
  'CONSUMER_SUSPENDED',
  'CONSUMER_INVALID',
  'API_KEY_SERVICE_BLOCKED',
  'API_KEY_HTTP_REFERRER_BLOCKED',
  'API_KEY_IP_ADDRESS_BLOCKED',
  'API_KEY_ANDROID_APP_BLOCKED',
  'API_KEY_IOS_APP_BLOCKED',
  'ACCESS_TOKEN_EXPIRED',
  'ACCESS_TOKEN_SCOPE_INSUFFICIENT',
  'ACCESS_TOKEN_TYPE_UNSUPPORTED',
  'CREDENTIALS_MISSING',
  'IAM_PERMISSION_DENIED',
  'USER_PROJECT_DENIED',
  'SERVICE_NOT_VISIBLE',
  'GCP_SUSPENDED',
]);

/**
 * OpenAI's and vLLM's words for an unknown model ("The model `x` does not exist"): about the
 * model the deployment sends, whatever value of the caller's the name also equals. vLLM's numeric
 * code never reads as model_not_found, so the words are the only sign.
 */
const MODEL_MISSING = /\bThe model `[^`]{1,256}` does not exist\b/i;

/** Fields that name the deployment, not something the caller refers to. */
const DEPLOYMENT_PARAMS = new Set(['model', 'deployment', 'api-version', 'api_key', 'key']);

/** OpenAI-style codes for an object the request names that the upstream does not hold. */
const OBJECT_CODES =
  /^(file|container|vector_store|video|response|batch|upload|assistant|thread|message|run|conversation)_not_found$/;

/**
 * Anthropic names the offending field first: "model: claude-x", "messages.0.content.1.source:
 * File not found". Only a path (`a.b`, `a[0]`) or a top-level field of a request counts, so a
 * proxy's "error: not found" or "Error: ..." is not read as naming a field.
 */
const FIELD_PREFIX = /^([a-z_][a-z0-9_]*(?:\.[a-z0-9_]+|\[\d+\])*): /;
const TOP_FIELDS = new Set(['model', 'messages', 'system', 'tools', 'container', 'mcp_servers', 'documents']);

function prefixField(message: string): string | undefined {
  const path = FIELD_PREFIX.exec(message)?.[1];
  if (path === undefined) return undefined;
  return /[.[]/.test(path) || TOP_FIELDS.has(path) ? path : undefined;
}

const ID_CHAR = /[A-Za-z0-9_-]/;

/**
 * `id` stands in `text` as a whole word, not inside a longer one (`file-1` in `file-12`); case is
 * ignored, as an upstream may fold it (both come lower-cased). A mention right after '/' is a path
 * segment: a route echo ("Invalid URL (POST /v1/v1/chat/completions)", "Route
 * POST:/v1/videos/video_abc/remix not found") when the whole path around it is part of `route`,
 * the path the attempt was sent to, or the route is not known; otherwise the upstream naming its
 * own resource path ("files/abc"). The whole path is asked, not the id alone: a fake id equal to
 * a route word (`file_id: "messages"` on /v1/messages, answered "File not found: files/messages")
 * would otherwise be an echo and count against the deployment.
 */
function mentions(text: string, id: string, route: string | undefined, cut: boolean): boolean {
  const named = (at: number, length: number): boolean => {
    const before = at === 0 ? '' : text[at - 1]!;
    if (ID_CHAR.test(before)) return false;
    return before !== '/' || (route !== undefined && !route.includes(pathAround(text, at, length)));
  };
  for (let at = text.indexOf(id); at !== -1; at = text.indexOf(id, at + 1)) {
    const after = text[at + id.length] ?? '';
    if (!ID_CHAR.test(after) && named(at, id.length)) return true;
  }
  return cut && endsInPrefix(text, id, named);
}

/** Shortest start of a value that, ending a cut message, is read as naming the whole value. */
const MIN_CUT_PREFIX = 64;

/**
 * The cut message ends in the first MIN_CUT_PREFIX or more characters of `id`: a value longer than
 * what is read (the caller chooses its length; file ids are not capped) is named as far as the
 * message is read. Without this, a 1,100-character fake id was never seen whole and its 404 counted.
 */
function endsInPrefix(text: string, id: string, named: (at: number, length: number) => boolean): boolean {
  if (id.length < MIN_CUT_PREFIX) return false;
  const head = id.slice(0, MIN_CUT_PREFIX);
  for (let at = text.indexOf(head); at !== -1; at = text.indexOf(head, at + 1)) {
    // `named` first: it refuses in O(1) the overlapping matches inside a run (`ffff…`).
    const length = text.length - at;
    if (length < id.length && named(at, length) && id.startsWith(text.slice(at))) return true;
  }
  return false;
}

/** Characters that end a path in an upstream's prose. */
const PATH_END = /[\s"'`()<>[\]{},]/;

/**
 * The path the match at `at` stands in, without a leading `METHOD:` or `scheme://host`, a query,
 * or the sentence's closing punctuation. Bounded by SCAN_CHARS, as `text` is.
 */
function pathAround(text: string, at: number, length: number): string {
  let start = at;
  while (start > 0 && !PATH_END.test(text[start - 1]!)) start--;
  let end = at + length;
  while (end < text.length && !PATH_END.test(text[end]!)) end++;
  return text
    .slice(start, end)
    .replace(/^[a-z][a-z0-9+.-]*:\/\/[^/]*/, '')
    .replace(/^[a-z]+:(?=\/)/, '')
    .replace(/[?#].*$/, '')
    .replace(/[.,;:!]+$/, '');
}

/**
 * Shortest value read as a reference. Below it a word of the upstream's prose ("is", "a") could
 * match; any value from three characters on counts, whatever its shape: a rule that wanted digits
 * or separators let a caller choose an all-letter id ("abcdefgh") the rule would not read, so that
 * three such 404s ejected a deployment every tenant shares.
 */
const MIN_REFERENCE = 3;

/**
 * The forms a referenced value may take in the upstream's words: itself (trimmed),
 * or its URL's last segments, also percent-decoded. A space in a value is no reason to skip it:
 * the caller chooses the value, and one the rule does not read would again count.
 */
function forms(value: string): string[] {
  const v = value.trim();
  const out = [v];
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(v)) {
    const segments = v
      .split(/[?#]/, 1)[0]!
      .split('/')
      .filter((s) => s !== '');
    const last = segments.at(-1);
    const parent = segments.at(-2);
    if (last !== undefined) out.push(last, decoded(last));
    if (last !== undefined && parent !== undefined) out.push(`${parent}/${last}`);
  }
  return [...new Set(out)].filter((f) => f.length >= MIN_REFERENCE);
}

function decoded(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/**
 * Whether the body may send a reference: one of the reference fields' names stands in it as a
 * JSON key, or an escaped ASCII character (`\u005f`) might spell one. Bodies sent upstream are
 * JSON.stringify's, which escapes no ASCII letter, so the names stand as written. A large body (a
 * prompt with images may be megabytes) with none of them is not parsed; one with them is parsed
 * once, linear in its size, and then read as a small one is, case-folding and percent-decoding
 * alike: a pre-filter on the message's exact words missed a reference the upstream folded.
 */
const REFERENCE_KEY_TEXT =
  /"(?:file_id|file_url|fileUri|file_uri|skill_id|previous_response_id|vector_store_ids?|file_ids|container|conversation|mcp_servers)"|\\u00[2-7][0-9a-f]/i;

function mayReference(body: SentRequest['body']): body is string {
  return typeof body === 'string' && REFERENCE_KEY_TEXT.test(body);
}

/**
 * Gemini's answer for a file the key may not read, whether or not it exists: the words name a
 * file, never the deployment's key or model (those are "API key not valid", "models/x is not
 * found"), so they are the caller's whatever the file's name looks like.
 */
const GEMINI_FILE = /\bpermission to access the File (\S+?) or it may not exist\b/i;

/** The URL's path, decoded and lower-cased, or undefined when it is not known. */
function pathOf(url: string | undefined): string | undefined {
  if (url === undefined) return undefined;
  try {
    return decoded(new URL(url).pathname).toLowerCase();
  } catch {
    return undefined;
  }
}

/** `form` is a run of whole segments of `path` (segments end at '/' or, Gemini's method, ':'). */
function inPath(path: string | undefined, form: string): boolean {
  if (path === undefined) return false;
  for (let at = path.indexOf(`/${form}`); at !== -1; at = path.indexOf(`/${form}`, at + 1)) {
    const after = path[at + form.length + 1] ?? '';
    if (after === '' || after === '/' || after === ':') return true;
  }
  return false;
}

/**
 * A form (lower-cased) that may be the deployment's model rather than the caller's reference: it is the
 * model, or holds it as a segment (Gemini's "models/gemini-x is not found"), and the upstream
 * route names it too. Both are asked: the model alone would let a caller whose file is named
 * like the model (`file_id: "claude-x"`, answered "File not found: claude-x") make its 404 the
 * deployment's; the route alone would do the same for a file named `messages`.
 */
function namesModel(form: string, sent: SentRequest, path: string | undefined): boolean {
  const model = sent.upstreamModel.toLowerCase();
  if (model === '' || !(form === model || form.split('/').includes(model))) return false;
  // Not knowing the route, the model's own 404 is the likelier reading.
  return path === undefined || inPath(path, form);
}

interface SentReference {
  path: string;
  value: string;
}

/**
 * Keys whose string values name an object held upstream, wherever they stand: a file (OpenAI
 * `file_id`/`file_url`, Anthropic's `source.file_id`, Gemini's `fileData.fileUri`), a skill, a
 * stored response. Only these, not any `*_id`/`*url`: a value the caller chooses under another
 * key (`metadata.user_id`, which Anthropic's adapter makes of OpenAI's `user`; a `tool_call_id`;
 * an image URL) would otherwise let a common word ("api", "resource", the model's name) in the
 * deployment's own 403/404 read as the caller's reference and hide the fault.
 */
const REFERENCE_KEYS = new Set([
  'file_id',
  'file_url',
  'fileUri',
  'file_uri',
  'skill_id',
  'previous_response_id',
  'vector_store_id',
]);

/** Keys whose string lists are references (`tools[].vector_store_ids`, `container.file_ids`). */
const REFERENCE_LIST_KEYS = new Set(['vector_store_ids', 'file_ids']);

/**
 * Keys naming an object either as a string or as `{id}` (Anthropic's and OpenAI's `container`, a
 * Responses `conversation`).
 */
const OBJECT_KEYS = new Set(['container', 'conversation']);

/** Objects whose `url` is a reference: Anthropic's MCP connector servers. */
const URL_OWNERS = new Set(['mcp_servers']);

/** Caller-chosen labels, never references, however their keys are spelled. */
const SKIPPED_KEYS = new Set(['metadata']);

/** Whether a string under `key`, in an object that sits under `owner`, is a reference. */
function isReference(key: string, owner: string | undefined): boolean {
  if (REFERENCE_KEYS.has(key) || OBJECT_KEYS.has(key)) return true;
  if (owner === undefined) return false;
  return (key === 'id' && OBJECT_KEYS.has(owner)) || (key === 'url' && URL_OWNERS.has(owner));
}

/** The references a JSON body sends, with their paths (bounded: a body is walked once). */
function sentReferences(body: SentRequest['body']): SentReference[] {
  if (typeof body !== 'string' || body === '') return [];
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return [];
  }
  const out: SentReference[] = [];
  // `owner`: the key the object or array being walked sits under (an array's items share it).
  const walk = (v: unknown, path: string, depth: number, owner: string | undefined): void => {
    if (depth > 64 || typeof v !== 'object' || v === null) return;
    if (Array.isArray(v)) {
      v.forEach((item, i) => {
        const at = `${path}[${i}]`;
        if (typeof item !== 'string') walk(item, at, depth + 1, owner);
        else if (owner !== undefined && REFERENCE_LIST_KEYS.has(owner)) out.push({ path: at, value: item });
      });
      return;
    }
    for (const [key, child] of Object.entries(v as Record<string, unknown>)) {
      if (SKIPPED_KEYS.has(key)) continue;
      const at = path === '' ? key : `${path}.${key}`;
      if (typeof child !== 'string') walk(child, at, depth + 1, key);
      else if (isReference(key, owner)) out.push({ path: at, value: child });
    }
  };
  walk(parsed, '', 0, undefined);
  return out;
}

/**
 * The reference a 403/404 blames, or undefined when it blames the deployment. Evidence, in
 * order: a code for the deployment's own model/key/region (never the caller's); the field the
 * upstream names (`param`, or Anthropic's "field: " prefix) unless it is the model; a code for a
 * missing object; an id the request sent under a reference field that the message names. A 404
 * naming none of these (a misrouted base URL, Azure's missing deployment, an unknown model) is
 * the deployment's, as before.
 */
export function blamedReference(e: UpstreamError, sent: SentRequest): BlamedReference | undefined {
  if (e.status !== 403 && e.status !== 404) return undefined;
  if (e.code !== undefined && DEPLOYMENT_CODES.has(e.code)) return undefined;
  const message = e.message.slice(0, SCAN_CHARS);
  const named = e.param ?? prefixField(message);
  if (named !== undefined) {
    const root = named.split(/[.[]/, 1)[0]!;
    return DEPLOYMENT_PARAMS.has(root) ? undefined : { param: named };
  }
  if (MODEL_MISSING.test(message)) return undefined;
  const file = GEMINI_FILE.exec(message)?.[1];
  if (file !== undefined) {
    const named = file.toLowerCase();
    const ref = sentReferences(sent.body).find((r) => forms(r.value).some((f) => f.toLowerCase() === named));
    return ref ? { param: ref.path, id: file } : { id: file };
  }
  const path = pathOf(sent.url);
  const text = message.toLowerCase();
  const cut = e.message.length > SCAN_CHARS;
  for (const ref of mayReference(sent.body) ? sentReferences(sent.body) : []) {
    const id = forms(ref.value).find((f) => {
      const lower = f.toLowerCase();
      return !namesModel(lower, sent, path) && mentions(text, lower, path, cut);
    });
    if (id !== undefined) return { param: ref.path, id };
  }
  if (e.code !== undefined && OBJECT_CODES.test(e.code)) return {};
  return undefined;
}

/**
 * The error as the router should judge it: a request too large for the deployment becomes
 * `too_large` (failed over, never retried), a 403/404 blaming a reference becomes
 * `bad_reference` (neither retried nor failed over); neither counts against the deployment.
 * A key with no quota ("Limit 0") becomes `auth`, which counts. Anything else is returned as it was.
 */
export function blameRequest(e: UpstreamError, sent: SentRequest): UpstreamError {
  if (noQuota(e)) {
    const { retryAfterMs: _wait, ...rest } = e;
    return { ...rest, kind: 'auth' };
  }
  const big = tooLarge(e);
  if (big) {
    const { retryAfterMs: _wait, ...rest } = e;
    return { ...rest, kind: 'too_large', message: tooLargeMessage(big, e.message) };
  }
  const ref = blamedReference(e, sent);
  if (ref) {
    const out: UpstreamError = { ...e, kind: 'bad_reference' };
    if (ref.param !== undefined) out.param = ref.param;
    return out;
  }
  return e;
}

/**
 * Names the limit and the request's size, without the provider's wording around them, which
 * names the upstream organisation the gateway's key belongs to.
 */
function tooLargeMessage(big: TooLarge, upstream: string): string {
  if (big.limit !== undefined && big.requested !== undefined) {
    const unit = /tokens per min|\bTPM\b/i.test(upstream) ? ' tokens per minute' : '';
    return (
      `request too large for the deployment's rate limit: it needs ${big.requested} tokens, ` +
      `more than the limit of ${big.limit}${unit}; shorten the input or lower max_tokens`
    );
  }
  return `request too large for the upstream: ${upstream}`;
}
