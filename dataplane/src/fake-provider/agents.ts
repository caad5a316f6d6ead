/**
 * The fake's agent and utility surfaces: an A2A agent answering JSON-RPC `message/send` at
 * any path ending in `/a2a` or `/a2a/<name>`, and Mistral's OCR at `/ocr`. Deterministic so
 * tests can assert exact answers: see README.md.
 */
import { asString, isRecord, randomId } from './behaviour.ts';
import { openaiError, openaiErrors } from './openai-errors.ts';
import type { ErrorReply, Outcome, Route, RouteContext } from './types.ts';

/** Pages the fake reads from a document given by http(s) URL (it fetches nothing). */
export const FAKE_URL_PAGES = 3;
/** A text part containing this makes the agent answer with a JSON-RPC error. */
export const FAKE_AGENT_FAIL_WORD = 'agentfail';

const hasBearer = (ctx: Omit<RouteContext, 'body'>): boolean =>
  /^Bearer\s+\S+/i.test(String(ctx.headers.authorization ?? ''));

/** The agent's reply text to a message's text parts. */
export const fakeAgentReply = (text: string): string => `agent heard: ${text}`;

function answerAgent(body: Record<string, unknown>): Outcome {
  const id = body.id ?? null;
  const params = isRecord(body.params) ? body.params : {};
  const message = isRecord(params.message) ? params.message : {};
  const parts = Array.isArray(message.parts) ? message.parts.filter(isRecord) : [];
  const text = parts.map((p) => asString(p.text) ?? '').join(' ');
  if (body.method !== 'message/send')
    return {
      kind: 'json',
      body: { jsonrpc: '2.0', id, error: { code: -32601, message: 'Method not found' } },
    };
  if (text.includes(FAKE_AGENT_FAIL_WORD))
    return { kind: 'json', body: { jsonrpc: '2.0', id, error: { code: -32603, message: 'agent failed' } } };
  const taskId = asString(message.taskId) ?? randomId('task-');
  const contextId = asString(message.contextId) ?? randomId('ctx-');
  const reply = { kind: 'text', text: fakeAgentReply(text) };
  return {
    kind: 'json',
    body: {
      jsonrpc: '2.0',
      id,
      result: {
        kind: 'task',
        id: taskId,
        contextId,
        status: { state: 'completed', timestamp: new Date().toISOString() },
        artifacts: [{ artifactId: randomId('art-'), parts: [reply] }],
        history: [
          message,
          { kind: 'message', role: 'agent', messageId: randomId('msg-'), parts: [reply], taskId, contextId },
        ],
      },
    },
  };
}

const agentRoute: Route = {
  errors: openaiErrors,
  authorized: hasBearer,
  describe: () => ({ model: undefined, stream: false }),
  answer: (ctx) => answerAgent(ctx.body),
};

function pdfPages(url: string): number {
  const payload = url.slice(url.indexOf(',') + 1);
  const text = Buffer.from(payload, 'base64').toString('latin1');
  return Math.max(1, text.split('/Type /Page').length - 1 - (text.split('/Type /Pages').length - 1));
}

function ocrDocument(
  body: Record<string, unknown>,
): { pages: number; bytes: number | null; name: string } | undefined {
  const d = body.document;
  if (!isRecord(d)) return undefined;
  if (d.type === 'image_url') {
    const url = isRecord(d.image_url) ? asString(d.image_url.url) : asString(d.image_url);
    return url ? { pages: 1, bytes: null, name: 'image' } : undefined;
  }
  if (d.type !== 'document_url') return undefined;
  const url = asString(d.document_url);
  if (!url) return undefined;
  if (!url.startsWith('data:'))
    return { pages: FAKE_URL_PAGES, bytes: null, name: asString(d.document_name) ?? 'document' };
  return {
    pages: pdfPages(url),
    bytes: Math.floor(((url.length - url.indexOf(',') - 1) * 3) / 4),
    name: 'document',
  };
}

function validateOcr(body: Record<string, unknown>): ErrorReply | undefined {
  if (typeof body.model !== 'string') return openaiError(422, 'model is required', 'invalid_request_error');
  if (!ocrDocument(body))
    return openaiError(422, 'document is invalid', 'invalid_request_error', null, 'document');
  return undefined;
}

/** The markdown the fake reads off page `index` (zero-based). */
export const fakeOcrMarkdown = (name: string, index: number): string =>
  `# Page ${index + 1}\n\nText of ${name}.`;

function answerOcr(body: Record<string, unknown>): Outcome {
  const doc = ocrDocument(body)!;
  const all = Array.from({ length: doc.pages }, (_, i) => i);
  const wanted = Array.isArray(body.pages) ? all.filter((i) => (body.pages as unknown[]).includes(i)) : all;
  return {
    kind: 'json',
    body: {
      pages: wanted.map((index) => ({
        index,
        markdown: fakeOcrMarkdown(doc.name, index),
        images: [],
        dimensions: { dpi: 200, height: 2200, width: 1700 },
      })),
      model: asString(body.model),
      document_annotation: null,
      usage_info: { pages_processed: wanted.length, doc_size_bytes: doc.bytes },
    },
  };
}

const ocrRoute: Route = {
  errors: openaiErrors,
  authorized: hasBearer,
  validate: (ctx) => validateOcr(ctx.body),
  describe: (ctx) => ({ model: asString(ctx.body.model), stream: false }),
  answer: (ctx) => answerOcr(ctx.body),
};

export function agentsRoute(method: string, pathname: string): Route | undefined {
  if (method !== 'POST') return undefined;
  if (/\/a2a(\/[^/]+)?$/.test(pathname)) return agentRoute;
  if (pathname.endsWith('/ocr')) return ocrRoute;
  return undefined;
}
