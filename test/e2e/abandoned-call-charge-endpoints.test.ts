/**
 * The abandoned-call rule beyond chat: embeddings, legacy completions (plain and a stream
 * before its headers), rerank, image generation, transcription, speech, video creation, OCR
 * and A2A messages left by their
 * client once on the wire upstream are charged what the provider received, by each route's
 * own pricing, recorded 499 and settled once; left while no call is on the wire (a backoff
 * between attempts), they are charged nothing. Over HTTP with fetch and an AbortController;
 * the fake provider holds each call (`hang`) until the gateway cuts it, so every step waits on
 * an observed state, never a guessed time.
 */
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { UsageRecord } from '../../dataplane/src/accounting/usage.ts';
import { estimateTextTokens } from '../../dataplane/src/accounting/tokens.ts';
import { FAKE_URL_PAGES } from '../../dataplane/src/fake-provider/agents.ts';
import { DEFAULT_RETRY } from '../../dataplane/src/router/policy.ts';
import { apiKey, deployment, fakeBase, startStack, tenant, type Stack } from '../harness/stack.ts';
import { until } from '../harness/until.ts';
import { usageToday } from '../harness/usage-record.ts';

const KEY = 'sk-test-abandoned-endpoints';
const BUDGET = { limitUsd: 50, period: 'monthly' } as const;
const KEY_REF = { tenant: 'acme', keyId: 'default/k' };
const PRICING = {
  inputPerMillionTokens: 100,
  outputPerMillionTokens: 200,
  perSearch: 0.002,
  perImage: 0.04,
  perSecond: 0.006,
  perCharacter: 0.000015,
  perPage: 0.01,
  perRequest: 0.02,
};
const PROMPT = Array.from({ length: 40 }, (_, i) => `Invoice ${i} was paid on time by the customer.`).join(
  ' ',
);
const QUERY = 'which invoices were paid late';
/** 150 documents: two searches by the hundred-documents rule. */
const DOCUMENTS = Array.from({ length: 150 }, (_, i) => `Invoice ${i} was settled.`);
/**
 * An MP3-looking upload of 20,000 bytes: 10 s at the hold's 2,000 B/s floor, 1.25 s at 128
 * kbit/s, and 0.5 s at the 320 kbit/s ceiling a call left unanswered is charged by.
 */
const MP3 = Buffer.alloc(20_000);
MP3.write('ID3', 0, 'latin1');
const SPEECH_INPUT = 'Your invoice has been paid, thank you.';

const micros = (usd: number) => Math.round(usd * 1e6);
/** $100 per million input tokens is 100 micro-dollars a token: no rounding in play. */
const tokenMicros = (tokens: number) => tokens * PRICING.inputPerMillionTokens;

interface Case {
  name: string;
  model: string;
  /** What the fake's path contains for this route. */
  upstreamPath: string;
  request(): { path: string; init: RequestInit };
  /** The 499's charge in micro-dollars, and the prompt tokens it records. */
  micros: number;
  promptTokens: number;
  /** A route never retried once the provider may have acted (it creates a job or a task). */
  createsObject?: true;
}

const json = (path: string, body: unknown) => () => ({
  path,
  init: { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) },
});

/** A JSON-RPC `message/send` to `agent`'s route. */
function agentMessage(agent: string) {
  return {
    jsonrpc: '2.0',
    id: 1,
    method: 'message/send',
    params: {
      message: { role: 'user', messageId: `m-${agent}`, parts: [{ kind: 'text', text: 'book a flight' }] },
    },
  };
}

const PROMPT_TOKENS = estimateTextTokens(PROMPT);
const RERANK_TOKENS = DOCUMENTS.reduce((n, d) => n + estimateTextTokens(QUERY) + estimateTextTokens(d), 0);

const CASES: Case[] = [
  {
    name: 'embeddings: the input tokens',
    model: 'emb',
    upstreamPath: '/embeddings',
    request: json('/embeddings', { model: 'emb', input: PROMPT }),
    micros: tokenMicros(PROMPT_TOKENS),
    promptTokens: PROMPT_TOKENS,
  },
  {
    name: 'legacy completions: the prompt tokens',
    model: 'legacy',
    upstreamPath: '/completions',
    request: json('/completions', { model: 'legacy', prompt: PROMPT, max_tokens: 20 }),
    micros: tokenMicros(PROMPT_TOKENS),
    promptTokens: PROMPT_TOKENS,
  },
  {
    name: 'a legacy completions stream before its headers: the prompt tokens',
    model: 'legacy',
    upstreamPath: '/completions',
    request: json('/completions', { model: 'legacy', prompt: PROMPT, max_tokens: 20, stream: true }),
    micros: tokenMicros(PROMPT_TOKENS),
    promptTokens: PROMPT_TOKENS,
  },
  {
    name: 'rerank: the query and documents read, and their two searches',
    model: 'ranker',
    upstreamPath: '/rerank',
    request: json('/rerank', { model: 'ranker', query: QUERY, documents: DOCUMENTS }),
    micros: tokenMicros(RERANK_TOKENS) + micros(2 * PRICING.perSearch),
    promptTokens: RERANK_TOKENS,
  },
  {
    name: 'image generation: every image asked for, at its size',
    model: 'img',
    upstreamPath: '/images/generations',
    // 1792×1024 is two 1024×1024 blocks: 3 images are 6 units.
    request: json('/images/generations', { model: 'img', prompt: 'a paid invoice', n: 3, size: '1792x1024' }),
    micros: micros(6 * PRICING.perImage),
    promptTokens: 0,
  },
  {
    name: 'transcription: the fewest seconds the upload can last',
    model: 'audio',
    upstreamPath: '/audio/transcriptions',
    request: () => {
      const form = new FormData();
      form.set('model', 'audio');
      form.set('file', new Blob([MP3], { type: 'audio/mpeg' }), 'talk.mp3');
      return { path: '/audio/transcriptions', init: { method: 'POST', body: form } };
    },
    micros: micros(0.5 * PRICING.perSecond),
    promptTokens: 0,
  },
  {
    name: 'speech before its audio starts: the input characters',
    model: 'audio',
    upstreamPath: '/audio/speech',
    request: json('/audio/speech', { model: 'audio', input: SPEECH_INPUT, voice: 'alloy' }),
    micros: micros(SPEECH_INPUT.length * PRICING.perCharacter),
    promptTokens: 0,
  },
  {
    name: 'video creation: the seconds asked, as the job is made and billed upstream anyway',
    model: 'sora',
    upstreamPath: '/videos',
    request: json('/videos', { model: 'sora', prompt: 'a paid invoice', seconds: 8 }),
    micros: micros(8 * PRICING.perSecond),
    promptTokens: 0,
    createsObject: true,
  },
  {
    name: 'OCR: the one page every document has at least',
    model: 'ocr',
    upstreamPath: '/ocr',
    request: json('/ocr', {
      model: 'ocr',
      document: { type: 'document_url', document_url: 'https://example.com/report.pdf' },
    }),
    micros: micros(PRICING.perPage),
    promptTokens: 0,
  },
  {
    name: 'A2A: the one request the agent acts on',
    model: 'agent',
    upstreamPath: '/a2a/agent',
    request: json('/a2a/agent/message/send', agentMessage('agent')),
    micros: micros(PRICING.perRequest),
    promptTokens: 0,
    createsObject: true,
  },
];

/**
 * A provider that refuses every call with a 429 whose error body is 32 MiB long, held open:
 * once that much has been written, the gateway has the 429's headers and is reading its body
 * (loopback buffers hold a few MiB), the moment a client leaving must not turn into a charge.
 */
function refusingProvider(): {
  server: Server;
  /** Resolves with the refusal once its body is being read; ended by the test. */
  next(): Promise<ServerResponse>;
} {
  const waiting: ((res: ServerResponse) => void)[] = [];
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(429, { 'content-type': 'application/json' });
      res.write(Buffer.alloc(32 * 1024 * 1024, 0x20), () => waiting.shift()?.(res));
    });
  });
  return { server, next: () => new Promise((r) => waiting.push(r)) };
}

/** A reranker that reports no search units (TEI/Jina-style); `hang` keeps its next answer back. */
function plainRanker(): { server: Server; seen: () => number; hang: (on: boolean) => void } {
  let seen = 0;
  let hang = false;
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      seen++;
      if (hang) return;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ results: [{ index: 0, relevance_score: 0.9 }] }));
    });
  });
  return { server, seen: () => seen, hang: (on) => (hang = on) };
}

const listen = async (server: Server): Promise<string> => {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
};

describe('a non-chat call abandoned upstream', () => {
  let stack: Stack;
  const fake = () => stack.fakes[0]!;
  const refusing = refusingProvider();
  const ranker = plainRanker();

  beforeAll(async () => {
    const refusingUrl = await listen(refusing.server);
    const rankerUrl = await listen(ranker.server);
    stack = await startStack(
      ([url]) =>
        [
          ['emb', 'openai', ['embeddings']],
          ['legacy', 'openai', ['completions', 'streaming']],
          ['ranker', 'openai-compatible', ['rerank']],
          ['img', 'openai', ['images']],
          ['audio', 'openai', ['audio']],
          ['sora', 'openai', ['video']],
          ['ocr', 'openai-compatible', ['ocr']],
          ['agent', 'openai-compatible', ['a2a']],
        ]
          .map(([model, provider, capabilities]) =>
            deployment({
              name: model as string,
              model: model as string,
              provider: provider as string,
              // An A2A agent's baseUrl is its JSON-RPC endpoint.
              baseUrl: model === 'agent' ? `${url!}/a2a/agent` : fakeBase(url!),
              capabilities: capabilities as string[],
              pricing: PRICING,
            }),
          )
          .concat(
            [
              ['emb-429', 'openai', ['embeddings']],
              ['chat-429', 'openai', undefined],
              ['sora-429', 'openai', ['video']],
              ['ocr-429', 'openai-compatible', ['ocr']],
              ['agent-429', 'openai-compatible', ['a2a']],
            ].map(([model, provider, capabilities]) =>
              deployment({
                name: model as string,
                model: model as string,
                provider: provider as string,
                baseUrl: refusingUrl,
                ...(capabilities && { capabilities: capabilities as string[] }),
                pricing: PRICING,
              }),
            ),
          )
          .concat(
            deployment({
              name: 'plain-ranker',
              model: 'plain-ranker',
              provider: 'openai-compatible',
              baseUrl: rankerUrl,
              capabilities: ['rerank'],
              pricing: PRICING,
            }),
          )
          .concat([tenant('acme'), apiKey('k', KEY, 'acme', { budget: BUDGET })])
          .join(''),
      // One deployment per model: a failed attempt is retried after a backoff no test outlives.
      { retry: { ...DEFAULT_RETRY, backoffBaseMs: 30_000, backoffMaxMs: 30_000 } },
    );
  });
  afterAll(async () => {
    await stack.close();
    for (const { server } of [refusing, ranker]) {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    }
  });
  beforeEach(() => {
    fake().reset();
    stack.gateway.health.reset();
  });

  const budget = () => stack.gateway.stores.budgets.state(KEY_REF, BUDGET);
  const records = () => usageToday(stack, 'acme');
  const sentTo = (path: string) => fake().requests.filter((r) => r.path.includes(path)).length;

  /**
   * Sends `c`'s request, aborts it once `ready` holds (running `alongside` in the same tick;
   * no `ready`: lets it be answered), and returns the one record it left.
   */
  async function abandon(
    c: Case,
    ready: (() => Promise<boolean>) | undefined,
    alongside?: () => void,
  ): Promise<{ record: UsageRecord; spent: number }> {
    const spentBefore = (await budget()).spentUsd;
    const before = new Set((await records()).map((r) => r.id));
    const abort = new AbortController();
    const { path, init } = c.request();
    const call = fetch(`${stack.baseURL}${path}`, {
      ...init,
      headers: { ...(init.headers as Record<string, string>), authorization: `Bearer ${KEY}` },
      signal: abort.signal,
    }).then(
      (res) => `answered ${res.status}`,
      (err: unknown) => (err as Error).name,
    );
    if (ready) {
      await until('the call to reach its step', async () => ((await ready()) ? true : undefined));
      abort.abort();
      alongside?.();
    }
    const ended = await call;
    // In a race the answer may reach the client first.
    if (!ready) expect(ended).toBe('answered 200');
    else if (!alongside) expect(ended).toBe('AbortError');
    const added = await until('its usage record', async () => {
      const fresh = (await records()).filter((r) => !before.has(r.id));
      return fresh.length > 0 ? fresh : undefined;
    });
    expect(added).toHaveLength(1);
    // Settled once: spend moved by exactly the record's cost, and nothing is left held.
    const spent = await until('the settlement', async () => {
      const state = await budget();
      const moved = micros(state.spentUsd - spentBefore);
      return moved === micros(added[0]!.costUsd) && state.heldUsd === 0 ? moved : undefined;
    });
    return { record: added[0]!, spent };
  }

  it.each(CASES.map((c) => [c.name, c] as const))('left once sent upstream, %s', async (_name, c) => {
    fake().setFaults([{ match: { path: c.upstreamPath }, fault: { type: 'hang' }, times: 1 }]);
    const { record, spent } = await abandon(c, async () => sentTo(c.upstreamPath) >= 1);
    expect(record).toMatchObject({
      status: 499,
      errorType: 'client_closed_request',
      deployment: c.model,
      attempts: 1,
      promptTokens: c.promptTokens,
    });
    expect(c.micros).toBeGreaterThan(0);
    expect(micros(record.costUsd)).toBe(c.micros);
    expect(spent).toBe(c.micros);
  });

  it.each(CASES.map((c) => [c.name, c] as const))(
    'the answer and the client leaving at the same moment, %s: charged once',
    async (_name, c) => {
      fake().setFaults([{ match: { path: c.upstreamPath }, fault: { type: 'hold' }, times: 1 }]);
      let released = 0;
      // Released in the tick the client leaves: whichever the gateway sees first settles, once.
      const { record, spent } = await abandon(
        c,
        async () => sentTo(c.upstreamPath) >= 1,
        () => (released = fake().releaseHeld()),
      );
      expect(released).toBe(1);
      expect([200, 499]).toContain(record.status);
      expect(spent).toBeGreaterThan(0);
    },
  );

  it.each(CASES.map((c) => [c.name, c] as const))(
    'left between attempts (nothing on the wire), %s: charged nothing',
    async (_name, c) => {
      // A route that makes a job or a task retries only a refusal that cannot have acted (429).
      const [status, outcome] = c.createsObject ? [429, 'rate_limited'] : [500, 'server'];
      fake().setFaults([{ match: { path: c.upstreamPath }, fault: { type: 'status', status }, times: 1 }]);
      // The failed attempt is counted just before the router starts its backoff.
      const failed = new RegExp(
        `^gantry_upstream_attempts_total\\{[^}]*deployment="${c.model}"[^}]*outcome="${outcome}"[^}]*\\} (\\d+)`,
        'm',
      );
      const failures = async () =>
        Number(failed.exec(await (await fetch(`${stack.gateway.adminUrl}/metrics`)).text())?.[1] ?? 0);
      const seen = await failures();
      const { record, spent } = await abandon(c, async () => (await failures()) > seen);
      expect(sentTo(c.upstreamPath)).toBe(1);
      expect(record).toMatchObject({ status: 499, costUsd: 0, promptTokens: 0 });
      expect(spent).toBe(0);
    },
  );

  it.each([
    ['embeddings', json('/embeddings', { model: 'emb-429', input: PROMPT })],
    ['chat', json('/chat/completions', { model: 'chat-429', messages: [{ role: 'user', content: PROMPT }] })],
    ['video creation', json('/videos', { model: 'sora-429', prompt: 'a paid invoice', seconds: 8 })],
    [
      'OCR',
      json('/ocr', {
        model: 'ocr-429',
        document: { type: 'document_url', document_url: 'https://example.com/report.pdf' },
      }),
    ],
    ['A2A', json('/a2a/agent-429/message/send', agentMessage('agent-429'))],
  ])(
    '%s refused by the provider (429) as the client left, its error body still arriving: charged nothing',
    async (_name, request) => {
      let response: ServerResponse | undefined;
      void refusing.next().then((res) => (response = res));
      const { record, spent } = await abandon(
        { name: 'refused', model: '', upstreamPath: '', request, micros: 0, promptTokens: 0 },
        () => Promise.resolve(response !== undefined),
      );
      response!.end();
      expect(record).toMatchObject({ status: 499, costUsd: 0, promptTokens: 0 });
      expect(spent).toBe(0);
    },
  );

  it('rerank from a provider reporting no search units: left once sent, charged what its answer is', async () => {
    const c: Case = {
      ...CASES.find((k) => k.model === 'ranker')!,
      request: json('/rerank', { model: 'plain-ranker', query: QUERY, documents: DOCUMENTS }),
    };
    ranker.hang(false);
    const before = ranker.seen();
    const answered = await abandon(c, undefined);
    ranker.hang(true);
    const left = await abandon(c, () => Promise.resolve(ranker.seen() > before + 1));
    expect(answered.record.status).toBe(200);
    expect(left.record.status).toBe(499);
    // Two searches either way (150 documents, one per started hundred), plus the same tokens.
    expect(micros(answered.record.costUsd)).toBe(c.micros);
    expect(micros(left.record.costUsd)).toBe(c.micros);
  });

  it('an OCR call left once sent is charged no more than the same call answered', async () => {
    const c = CASES.find((k) => k.upstreamPath === '/ocr')!;
    const answered = await abandon(c, undefined);
    fake().setFaults([{ match: { path: c.upstreamPath }, fault: { type: 'hang' }, times: 1 }]);
    const left = await abandon(c, async () => sentTo(c.upstreamPath) >= 2);
    // The fake reads a URL document as FAKE_URL_PAGES (3) pages; one is the least any read is.
    expect(answered.record.status).toBe(200);
    expect(micros(answered.record.costUsd)).toBe(micros(FAKE_URL_PAGES * PRICING.perPage));
    expect(left.record.status).toBe(499);
    expect(micros(left.record.costUsd)).toBe(c.micros);
  });

  it('a transcription left once sent is charged no more than the same call answered', async () => {
    const c = CASES.find((k) => k.upstreamPath === '/audio/transcriptions')!;
    const answered = await abandon(c, undefined);
    fake().setFaults([{ match: { path: c.upstreamPath }, fault: { type: 'hang' }, times: 1 }]);
    const left = await abandon(c, async () => sentTo(c.upstreamPath) >= 2);
    // The fake reports 2 s for 20,000 bytes; the hold's bound, charged before, was 10 s.
    expect(answered.record.status).toBe(200);
    expect(left.record.status).toBe(499);
    expect(left.record.costUsd).toBeLessThanOrEqual(answered.record.costUsd);
  });
});
