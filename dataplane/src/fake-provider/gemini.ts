/**
 * Gemini: models/{model}:generateContent, :streamGenerateContent (SSE with alt=sse, else a
 * streamed JSON array), :embedContent, :batchEmbedContents, :countTokens.
 */
import { asArray, countTokens, isRecord, plan, promptTokens, randomId, splitWords } from './behaviour.ts';
import { DEFAULT_EMBEDDING_DIMS, fakeEmbedding } from './embedding.ts';
import {
  field,
  geminiError,
  geminiErrors,
  partsOf,
  readGeminiConversation,
  validateGemini,
} from './gemini-read.ts';
import type { ErrorReply, Frame, Outcome, Reply, Route, RouteContext } from './types.ts';

type Obj = Record<string, unknown>;

function usageMetadata(prompt: number, candidates: number): Obj {
  return {
    promptTokenCount: prompt,
    candidatesTokenCount: candidates,
    totalTokenCount: prompt + candidates,
    promptTokensDetails: [{ modality: 'TEXT', tokenCount: prompt }],
  };
}

/** Gemini says STOP for a function call too; MAX_TOKENS when the cap cut the answer. */
const finishOf = (reply: Reply): string => (reply.cut ? 'MAX_TOKENS' : 'STOP');

function response(
  parts: Obj[],
  finish: string | undefined,
  usage: Obj | undefined,
  model: string,
  id: string,
): Obj {
  const candidate: Obj = { content: { parts, role: 'model' } };
  if (finish) candidate.finishReason = finish;
  candidate.index = 0;
  const out: Obj = { candidates: [candidate] };
  if (usage) out.usageMetadata = usage;
  out.modelVersion = model;
  out.responseId = id;
  return out;
}

function replyParts(reply: Reply): Obj[] {
  return reply.kind === 'tool'
    ? [{ functionCall: { name: reply.name, args: reply.args } }]
    : [{ text: reply.text }];
}

/** Stream elements: one per word (cumulative usage, as Gemini reports it), then a finishing one. */
function streamElements(reply: Reply, model: string, usage: boolean): { role: Frame['role']; body: Obj }[] {
  const id = randomId('', 22);
  const meta = (candidates: number): Obj | undefined =>
    usage ? usageMetadata(reply.promptTokens, candidates) : undefined;
  if (reply.kind === 'tool') {
    // Gemini delivers a function call whole, finish reason included.
    return [
      {
        role: 'content',
        body: response(replyParts(reply), finishOf(reply), meta(reply.completionTokens), model, id),
      },
    ];
  }
  const out: { role: Frame['role']; body: Obj }[] = [];
  let sent = '';
  for (const w of splitWords(reply.text)) {
    sent += w;
    out.push({
      role: 'content',
      body: response([{ text: w }], undefined, meta(countTokens(sent)), model, id),
    });
  }
  out.push({
    role: 'post',
    body: response([{ text: '' }], finishOf(reply), meta(reply.completionTokens), model, id),
  });
  return out;
}

function answerGenerate(ctx: RouteContext, model: string, stream: boolean, usage: boolean): Outcome {
  const reply = plan(readGeminiConversation(ctx.body));
  if (!stream) {
    const meta = usage ? usageMetadata(reply.promptTokens, reply.completionTokens) : undefined;
    return {
      kind: 'json',
      body: response(replyParts(reply), finishOf(reply), meta, model, randomId('', 22)),
    };
  }
  const elements = streamElements(reply, model, usage);
  if (ctx.url.searchParams.get('alt') === 'sse') {
    const frames = elements.map((e) => ({ role: e.role, data: `data: ${JSON.stringify(e.body)}\r\n\r\n` }));
    const garbage = 'data: {"candidates": [{"content": {"parts": [{"text": "unterminat\r\n\r\n';
    return { kind: 'stream', contentType: 'text/event-stream', frames, garbage };
  }
  // Without alt=sse the API streams one JSON array; its closing bracket is the end marker.
  const frames: Frame[] = elements.map((e, i) => ({
    role: e.role,
    data: `${i === 0 ? '[' : ',\r\n'}${JSON.stringify(e.body)}`,
  }));
  frames.push({ role: 'end', data: ']' });
  return {
    kind: 'stream',
    contentType: 'application/json; charset=UTF-8',
    frames,
    garbage: ',\r\n{"candidates": [',
  };
}

function embedText(content: unknown): string {
  return partsOf(content)
    .filter((p) => typeof p.text === 'string')
    .map((p) => p.text as string)
    .join(' ');
}

function dimsOf(req: Obj): number {
  const d = field(req, 'outputDimensionality');
  return typeof d === 'number' && d > 0 ? d : DEFAULT_EMBEDDING_DIMS;
}

function validateEmbed(action: string, body: Obj): ErrorReply | undefined {
  if (action === 'embedContent') {
    return isRecord(body.content)
      ? undefined
      : geminiError(400, '* EmbedContentRequest.content: content is not specified\n');
  }
  const requests = asArray(body.requests);
  if (requests.length === 0 || !requests.every((r) => isRecord(r) && isRecord(r.content))) {
    return geminiError(400, '* BatchEmbedContentsRequest.requests: requests is not specified\n');
  }
  return undefined;
}

function answerEmbed(action: string, body: Obj): Outcome {
  if (action === 'embedContent') {
    return {
      kind: 'json',
      body: { embedding: { values: fakeEmbedding(embedText(body.content), dimsOf(body)) } },
    };
  }
  const embeddings = asArray(body.requests)
    .filter(isRecord)
    .map((r) => ({ values: fakeEmbedding(embedText(r.content), dimsOf(r)) }));
  return { kind: 'json', body: { embeddings } };
}

function authorized(ctx: Omit<RouteContext, 'body'>): boolean {
  const key = ctx.headers['x-goog-api-key'];
  return (typeof key === 'string' && key.trim() !== '') || Boolean(ctx.url.searchParams.get('key'));
}

const ACTIONS = new Set([
  'generateContent',
  'streamGenerateContent',
  'embedContent',
  'batchEmbedContents',
  'countTokens',
]);

export function geminiRoute(method: string, pathname: string): Route | undefined {
  const m = /\/models\/([^/:]+):([A-Za-z]+)$/.exec(pathname);
  if (method !== 'POST' || !m?.[1] || !m[2] || !ACTIONS.has(m[2])) return undefined;
  const model = decodeURIComponent(m[1]);
  const action = m[2];
  const stream = action === 'streamGenerateContent';
  const generates = stream || action === 'generateContent';
  return {
    errors: geminiErrors,
    authorized,
    validate: (ctx) =>
      generates || action === 'countTokens' ? validateGemini(ctx.body) : validateEmbed(action, ctx.body),
    describe: () => ({ model, stream }),
    answer: (ctx, { usage }) => {
      if (generates) return answerGenerate(ctx, model, stream, usage);
      if (action === 'countTokens') {
        const conv = readGeminiConversation(ctx.body);
        return { kind: 'json', body: { totalTokens: promptTokens(conv.promptChars, conv.images) } };
      }
      return answerEmbed(action, ctx.body);
    },
  };
}
