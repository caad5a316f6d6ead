import { describe, expect, it } from 'vitest';
import type { ChatRequest } from '../../formats/openai/types.ts';
import { exactDigest } from './exact.ts';
import { cacheKeyParts, type CacheScope } from './key.ts';

const scope: CacheScope = { tenant: 'acme', format: 'openai', embedder: 'minilm' };
const req = (over: Partial<ChatRequest> = {}, q = 'What is the capital of France?'): ChatRequest => ({
  model: 'gpt-4o-mini',
  messages: [
    { role: 'system', content: 'Be brief.' },
    { role: 'user', content: 'Hi' },
    { role: 'assistant', content: 'Hello!' },
    { role: 'user', content: q },
  ],
  ...over,
});
const digestOf = (r: ChatRequest, s: CacheScope = scope): string => exactDigest(cacheKeyParts(r, s)!);

describe('exactDigest', () => {
  it('is the same for the same request, whatever the transport and limit fields', () => {
    expect(digestOf(req())).toBe(digestOf(req()));
    expect(digestOf(req({ stream: true, user: 'u1', max_tokens: 10 }))).toBe(digestOf(req()));
    expect(digestOf(req())).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });

  it('differs with the tenant, format, embedder, model, sampling, system prompt, query or context', () => {
    const base = digestOf(req());
    const others = [
      digestOf(req(), { ...scope, tenant: 'globex' }),
      digestOf(req(), { ...scope, format: 'anthropic' }),
      digestOf(req(), { ...scope, embedder: 'builtin-v1-384' }),
      digestOf(req({ model: 'gpt-4o' })),
      digestOf(req({ temperature: 0.5 })),
      digestOf(req({}, 'What is the capital of France? ')),
      digestOf({
        ...req(),
        messages: req().messages.map((m, i) => (i === 0 ? { ...m, content: 'Be long.' } : m)),
      }),
      digestOf({
        ...req(),
        messages: req().messages.map((m, i) => (i === 2 ? { ...m, content: 'Hey!' } : m)),
      }),
    ];
    for (const d of others) expect(d).not.toBe(base);
    expect(new Set(others).size).toBe(others.length);
  });

  it('keeps text from shifting between query and context', () => {
    const a = exactDigest({ partition: 'acme/openai/h', query: 'a\nb', context: '' });
    const b = exactDigest({ partition: 'acme/openai/h', query: 'a', context: 'b' });
    const c = exactDigest({ partition: 'acme/openai/h', query: 'a', context: '\nb' });
    expect(new Set([a, b, c]).size).toBe(3);
  });

  it('tells lone surrogates apart', () => {
    const a = exactDigest({ partition: 'acme/openai/h', query: '\ud800', context: '' });
    const b = exactDigest({ partition: 'acme/openai/h', query: '\ud801', context: '' });
    expect(a).not.toBe(b);
  });
});
