import { describe, expect, it } from 'vitest';
import type { ChatRequest } from '../../formats/openai/types.ts';
import { createBuiltinEmbedder } from './builtin-embedder.ts';
import { embedForCache } from './embedder.ts';
import { cacheKeyParts } from './key.ts';
import { DEFAULT_THRESHOLDS, type Band } from './policy.ts';
import { chooseBand, cosine, dot, dualScore, entryVector, probeVector } from './score.ts';

const v = (...xs: number[]) => Float32Array.from(xs);

describe('dualScore', () => {
  it('is alpha·cos(query) + beta·cos(context)', () => {
    const qa = v(1, 0, 0);
    const qb = v(1, 1, 0); // cos 0.7071
    const ca = v(0, 0, 2);
    const cb = v(0, 0, 5); // cos 1, whatever the lengths
    expect(dualScore(qa, qb, ca, cb, 0.7, 0.3)).toBeCloseTo(0.7 * Math.SQRT1_2 + 0.3, 6);
    expect(dualScore(qa, qb, ca, cb, 1, 0)).toBeCloseTo(Math.SQRT1_2, 6);
    expect(cosine(v(0, 0), v(1, 0))).toBe(0);
  });

  it('equals the inner product of the stored [q | c] and the probe [alpha·q | beta·c]', () => {
    const e = createBuiltinEmbedder(64);
    const [qa, qb, ca, cb] = [
      'reset my password',
      'how do I reset my password',
      'user: hi',
      'user: hello',
    ].map((t) => e.embed([t]).then(([x]) => x as Float32Array));
    return Promise.all([qa, qb, ca, cb]).then(([a, b, c, d]) => {
      const stored = entryVector(a!, c!);
      for (const [alpha, beta] of [
        [0.7, 0.3],
        [0.5, 0.5],
        [1, 0],
      ] as const) {
        const probe = probeVector(b!, d!, alpha, beta);
        expect(dot(stored, probe)).toBeCloseTo(dualScore(a!, b!, c!, d!, alpha, beta), 5);
      }
    });
  });
});

describe('chooseBand', () => {
  const t = DEFAULT_THRESHOLDS;
  it.each([
    [1, 'DIRECT'],
    [0.95, 'DIRECT'],
    [0.9499999, 'DIRECT'], // float32 noise at the threshold counts as reaching it
    [0.9499, 'REUSE'],
    [0.9, 'REUSE'],
    [0.8999, 'TWEAK'],
    [0.85, 'TWEAK'],
    [0.8499, 'MISS'],
    [0, 'MISS'],
    [-1, 'MISS'],
    [Number.NaN, 'MISS'],
  ] as const)('%f → %s', (score, band) => {
    expect(chooseBand(score, t)).toBe(band);
  });

  it('follows the policy thresholds', () => {
    const custom = { direct: 0.99, reuse: 0.97, tweak: 0.5 };
    expect(chooseBand(0.98, custom)).toBe('REUSE');
    expect(chooseBand(0.6, custom)).toBe('TWEAK');
  });
});

describe('bands with the builtin embedder (default policy)', () => {
  const embedder = createBuiltinEmbedder();
  const system = 'You are a helpful assistant for a software team.';
  const req = (question: string, sys: string | null = system): ChatRequest => ({
    model: 'gpt-4o-mini',
    messages: [
      ...(sys === null ? [] : [{ role: 'system' as const, content: sys }]),
      { role: 'user', content: question },
    ],
  });

  async function score(a: ChatRequest, b: ChatRequest): Promise<number> {
    const scope = { tenant: 'acme', format: 'openai' as const, embedder: embedder.id };
    const [pa, pb] = [cacheKeyParts(a, scope)!, cacheKeyParts(b, scope)!];
    const [va, vb] = await Promise.all([embedForCache(embedder, pa), embedForCache(embedder, pb)]);
    return dot(entryVector(va.query, va.context), probeVector(vb.query, vb.context, 0.7, 0.3));
  }

  const cases: [Band, string, ChatRequest, ChatRequest][] = [
    [
      'DIRECT',
      'same question, other case and punctuation',
      req('What is the capital of France?'),
      req('what is the capital of france'),
    ],
    ['DIRECT', 'contraction', req('What is the capital of France?'), req("What's the capital of France?")],
    [
      'DIRECT',
      'filler words',
      req('How do I reverse a list in Python?'),
      req('how to reverse a list in python'),
    ],
    ['REUSE', 'reworded', req('How do I reverse a list in Python?'), req('How can I reverse a Python list?')],
    [
      'REUSE',
      'one more word',
      req('Write a haiku about autumn leaves'),
      req('Write a short haiku about autumn leaves'),
    ],
    [
      'TWEAK',
      'related but different',
      req('How do I reverse a list in Python?'),
      req('How do I reverse a linked list in Python?'),
    ],
    [
      'TWEAK',
      'reworded more',
      req('What is the capital of France?'),
      req('Which city is the capital of France?'),
    ],
    ['MISS', 'another country', req('What is the capital of France?'), req('What is the capital of Spain?')],
    [
      'MISS',
      'another task',
      req('How do I reverse a list in Python?'),
      req('How do I sort a list in Python?'),
    ],
    ['MISS', 'unrelated', req('What is the capital of France?'), req('How do I bake sourdough bread?')],
    [
      'MISS',
      'same question, with and without a conversation',
      req('What is the capital of France?'),
      {
        ...req('What is the capital of France?'),
        messages: [
          { role: 'system', content: system },
          { role: 'user', content: 'Let us talk about geography quizzes.' },
          { role: 'assistant', content: 'Sure, ask away.' },
          { role: 'user', content: 'What is the capital of France?' },
        ],
      },
    ],
  ];

  it('never compares requests under different system prompts (other partitions)', () => {
    const scope = { tenant: 'acme', format: 'openai' as const, embedder: embedder.id };
    const q = 'What is the capital of France?';
    const pirate = cacheKeyParts(req(q, 'You are a pirate. Answer in pirate speak.'), scope)!;
    expect(pirate.partition).not.toBe(cacheKeyParts(req(q), scope)!.partition);
    expect(pirate.partition).not.toBe(cacheKeyParts(req(q, null), scope)!.partition);
  });

  it.each(cases)('%s: %s', async (band, _why, a, b) => {
    const s = await score(a, b);
    expect(chooseBand(s, DEFAULT_THRESHOLDS), `score ${s.toFixed(4)}`).toBe(band);
  });

  it('scores an identical request 1', async () => {
    expect(await score(req('Hello there'), req('Hello there'))).toBeCloseTo(1, 5);
    expect(await score(req('Hello there', null), req('Hello there', null))).toBeCloseTo(1, 5);
  });
});
