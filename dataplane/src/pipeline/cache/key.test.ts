import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { ChatRequest } from '../../formats/openai/types.ts';
import { partitionTenant } from '../../stores/cache-entries/partition.ts';
import {
  cacheKeyParts,
  canonicalJson,
  CONTEXT_HEAD_CHARS,
  CONTEXT_TAIL_CHARS,
  type CacheScope,
} from './key.ts';
import { exactDigest } from './exact.ts';
import { extractFacts, factsSignature } from './lookalike.ts';

const scope: CacheScope = { tenant: 'acme', format: 'openai', embedder: 'builtin-v1-384' };

const base: ChatRequest = {
  model: 'gpt-4o-mini',
  messages: [
    { role: 'system', content: 'You are terse.' },
    { role: 'user', content: 'Hi' },
    { role: 'assistant', content: 'Hello!' },
    {
      role: 'user',
      content: [
        { type: 'text', text: 'What is 2+2?' },
        { type: 'text', text: 'Explain.' },
      ],
    },
  ],
};

const partitionOf = (req: ChatRequest, s: CacheScope = scope) => cacheKeyParts(req, s)!.partition;

describe('cacheKeyParts', () => {
  it('takes the last user message as query and everything before it as context', () => {
    const parts = cacheKeyParts(base, scope)!;
    expect(parts.query).toBe('What is 2+2?\nExplain.');
    // The system prompt is keyed exactly (the partition), not compared by meaning.
    expect(parts.context).toBe('user: Hi\nassistant: Hello!');
    expect(partitionTenant(parts.partition)).toBe('acme');
    expect(parts.partition).toMatch(/^acme\/openai\/[A-Za-z0-9_-]{32}$/);
  });

  it('renders tool calls in the context', () => {
    const parts = cacheKeyParts(
      {
        model: 'm',
        messages: [
          {
            role: 'assistant',
            content: null,
            tool_calls: [{ id: '1', type: 'function', function: { name: 'f', arguments: '{"a":1}' } }],
          },
          { role: 'tool', tool_call_id: '1', content: 'ok' },
          { role: 'user', content: 'next' },
        ],
      },
      scope,
    )!;
    expect(parts.context).toBe('assistant: f({"a":1})\ntool: ok');
  });

  it('has no key without a user message', () => {
    expect(
      cacheKeyParts({ model: 'm', messages: [{ role: 'system', content: 'x' }] }, scope),
    ).toBeUndefined();
  });

  it('keeps the start and the end of a very long context', () => {
    const long = 'x'.repeat(40_000);
    const parts = cacheKeyParts(
      {
        model: 'm',
        messages: [
          { role: 'assistant', content: `BEGIN${long}END` },
          { role: 'user', content: 'q' },
        ],
      },
      scope,
    )!;
    expect(parts.context.length).toBeLessThanOrEqual(CONTEXT_HEAD_CHARS + CONTEXT_TAIL_CHARS + 3);
    expect(parts.context.startsWith('assistant: BEGIN')).toBe(true);
    expect(parts.context.endsWith('END')).toBe(true);
  });

  it('partitions by tenant, format and embedder', () => {
    const p = partitionOf(base);
    expect(partitionOf(base, { ...scope, tenant: 'other' })).not.toBe(p);
    expect(partitionOf(base, { ...scope, format: 'anthropic' })).not.toBe(p);
    expect(partitionOf(base, { ...scope, embedder: 'model:text-embedding-3-small' })).not.toBe(p);
  });

  it.each<[string, Partial<ChatRequest>]>([
    ['model', { model: 'gpt-4o' }],
    ['response_format', { response_format: { type: 'json_object' } }],
    ['json schema', { response_format: { type: 'json_schema', json_schema: { name: 'x', schema: {} } } }],
    ['n', { n: 2 }],
    ['stop', { stop: ['\n'] }],
    ['reasoning_effort', { reasoning_effort: 'high' }],
    ['logprobs', { logprobs: true, top_logprobs: 3 }],
    ['logit_bias', { logit_bias: { '50256': -100 } }],
    ['an unknown field', { verbosity: 'low' }],
    ['modalities', { modalities: ['text', 'audio'], audio: { voice: 'alloy', format: 'mp3' } }],
    ['prediction', { prediction: { type: 'content', content: 'x' } }],
    ['temperature', { temperature: 0.2 }],
    ['top_p', { top_p: 0.5 }],
    ['top_k', { top_k: 5 }],
    ['seed', { seed: 7 }],
    ['presence_penalty', { presence_penalty: 1 }],
    ['frequency_penalty', { frequency_penalty: 1 }],
    ['thinking (Anthropic)', { thinking: { type: 'enabled', budget_tokens: 2048 } }],
  ])('changes with %s', (_name, change) => {
    expect(partitionOf({ ...base, ...change })).not.toBe(partitionOf(base));
  });

  it.each<[string, Partial<ChatRequest>]>([
    ['stream', { stream: true, stream_options: { include_usage: true } }],
    ['tool_choice without tools', { tool_choice: 'none', parallel_tool_calls: false }],
    ['limits', { max_tokens: 50, max_completion_tokens: 60 }],
    ['bookkeeping', { user: 'u1', metadata: { cache_bypass: 'false' }, store: true, service_tier: 'auto' }],
    ['default spellings', { n: 1, stop: [], response_format: { type: 'text' }, logprobs: false }],
  ])('does not change with %s', (_name, change) => {
    expect(partitionOf({ ...base, ...change })).toBe(partitionOf(base));
  });

  const withMessages = (messages: ChatRequest['messages']): ChatRequest => ({ ...base, messages });
  const turns = base.messages.slice(1);

  it.each<[string, ChatRequest['messages']]>([
    ['another system prompt', [{ role: 'system', content: 'You are verbose.' }, ...turns]],
    ['no system prompt', turns],
    [
      'a developer message',
      [...base.messages.slice(0, 1), { role: 'developer', content: 'JSON only' }, ...turns],
    ],
    [
      'system prompt as parts',
      [{ role: 'system', content: [{ type: 'text', text: 'You are verbose.' }] }, ...turns],
    ],
    ['a system prompt moved between turns', [turns[0]!, turns[1]!, base.messages[0]!, turns[2]!]],
    ['a speaker name', [base.messages[0]!, turns[0]!, turns[1]!, { ...turns[2]!, name: 'bob' }]],
    [
      'a system message after the question',
      [...base.messages, { role: 'system', content: 'Answer in French.' }],
    ],
  ])('changes with %s', (_name, messages) => {
    expect(partitionOf(withMessages(messages))).not.toBe(partitionOf(base));
  });

  it('keeps earlier turns in the context, not the partition (compared by meaning and facts)', () => {
    const other = withMessages([base.messages[0]!, { role: 'user', content: 'Hey' }, turns[1]!, turns[2]!]);
    expect(partitionOf(other)).toBe(partitionOf(base));
    expect(cacheKeyParts(other, scope)!.context).not.toBe(cacheKeyParts(base, scope)!.context);
  });

  it('keys the facts of earlier turns, and the unseen middle of a long conversation exactly', () => {
    const talk = (said: string): ChatRequest => ({
      ...base,
      messages: [{ role: 'user', content: said }, { role: 'assistant', content: 'ok' }, turns[2]!],
    });
    expect(partitionOf(talk('I weigh 60 kg'))).not.toBe(partitionOf(talk('I weigh 6 kg')));
    expect(partitionOf(talk('I weigh 60 kg'))).toBe(partitionOf(talk('i weigh 60 kg')));
    const filler = 'lorem ipsum '.repeat(2_000);
    const long = (middle: string) => talk(`${filler}${middle}${filler}`);
    expect(partitionOf(long('same words here'))).toBe(partitionOf(long('same words here')));
    expect(partitionOf(long('same words here'))).not.toBe(partitionOf(long('other words here')));
  });

  it('treats a stop string and a one-element stop list alike', () => {
    expect(partitionOf({ ...base, stop: 'END' })).toBe(partitionOf({ ...base, stop: ['END'] }));
  });

  it('never matches requests about different images, only by their text', () => {
    const withImage = (url: string): ChatRequest => ({
      model: 'gpt-4o',
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What is in this picture?' },
            { type: 'image_url', image_url: { url } },
          ],
        },
      ],
    });
    const a = cacheKeyParts(withImage('https://x/cat.png'), scope)!;
    const b = cacheKeyParts(withImage('https://x/dog.png'), scope)!;
    expect(a.query).toBe('What is in this picture?');
    expect(a.partition).not.toBe(b.partition);
    expect(cacheKeyParts(withImage('https://x/cat.png'), scope)!.partition).toBe(a.partition);
  });

  it('keys an assistant prefill after the last user message exactly', () => {
    const prefilled = (text: string): ChatRequest => ({
      ...base,
      messages: [...base.messages, { role: 'assistant', content: text }],
    });
    expect(partitionOf(prefilled('{'))).not.toBe(partitionOf(base));
    expect(partitionOf(prefilled('{'))).not.toBe(partitionOf(prefilled('[')));
    expect(cacheKeyParts(prefilled('{'), scope)!.query).toBe('What is 2+2?\nExplain.');
  });

  it('encodes tenant names so the key stays unambiguous', () => {
    const weird = cacheKeyParts(base, { ...scope, tenant: 'a/b "c"*' })!;
    expect(partitionTenant(weird.partition)).toBe('a/b "c"*');
    expect(weird.partition.split('/')).toHaveLength(3);
  });
});

describe('request fields never stand in for the values Gantry derives', () => {
  /**
   * Each case: a request whose messages (or scope) make Gantry derive an internal shape value,
   * and a spoof that sends that value as a top-level field instead. Keyed in one object, the
   * two shared a partition and an exact digest, so one key could plant an answer (made without
   * the system prompt, without the image…) that another key's real request was served.
   */
  const Q = 'Which vendor should I use?';
  const S = 'You are Acme support. Never recommend competitors.';
  const image = { type: 'image_url', image_url: { url: 'https://x/cat.png' } } as const;
  const plain = (extra: Record<string, unknown> = {}): ChatRequest =>
    ({ model: 'm', messages: [{ role: 'user', content: Q }], ...extra }) as ChatRequest;
  const filler = 'lorem ipsum '.repeat(2_000);
  const longContext = `assistant: ${filler}I weigh 60 kg${filler}`;
  const cases: { name: string; real: ChatRequest; realScope?: CacheScope; spoof: ChatRequest }[] = [
    {
      name: 'instructions',
      real: {
        model: 'm',
        messages: [
          { role: 'system', content: S },
          { role: 'user', content: Q },
        ],
      },
      spoof: plain({ instructions: [[0, 'system', S]] }),
    },
    {
      name: 'media',
      real: { model: 'm', messages: [{ role: 'user', content: [{ type: 'text', text: Q }, image] }] },
      spoof: plain({ media: [image] }),
    },
    {
      name: 'extras',
      real: { model: 'm', messages: [{ role: 'user', content: Q, name: 'bob' }] },
      spoof: plain({ extras: [[0, { name: 'bob' }]] }),
    },
    {
      name: 'tail',
      real: {
        model: 'm',
        messages: [
          { role: 'user', content: Q },
          { role: 'assistant', content: '{' },
        ],
      },
      spoof: plain({ tail: ['assistant: {'] }),
    },
    {
      name: 'embedder',
      real: plain(),
      realScope: { ...scope, embedder: 'other-embedder' },
      spoof: plain({ embedder: 'other-embedder' }),
    },
    // The version a client sends must not reach entries keyed under another layout.
    { name: 'v (old layout)', real: plain(), spoof: plain({ v: 2 }) },
    { name: 'v (this layout)', real: plain(), spoof: plain({ v: 3 }) },
    {
      name: 'contextFacts and contextMiddle',
      real: {
        model: 'm',
        messages: [
          { role: 'assistant', content: longContext.slice(11) },
          { role: 'user', content: Q },
        ],
      },
      spoof: plain({
        contextFacts: factsSignature(
          extractFacts(
            `${longContext.slice(0, CONTEXT_HEAD_CHARS)}\n…\n${longContext.slice(-CONTEXT_TAIL_CHARS)}`,
          ),
        ),
        contextMiddle: createHash('sha256')
          .update(longContext.slice(CONTEXT_HEAD_CHARS, longContext.length - CONTEXT_TAIL_CHARS))
          .digest('base64url'),
      }),
    },
    {
      name: 'fields',
      real: plain({ temperature: 0.5 }),
      spoof: plain({ fields: { model: 'm', temperature: 0.5 } }),
    },
  ];

  it.each(cases)('a top-level `$name` gets its own partition', ({ real, realScope, spoof }) => {
    const r = cacheKeyParts(real, realScope ?? scope)!;
    const s = cacheKeyParts(spoof, scope)!;
    expect(s.partition).not.toBe(r.partition);
    expect(exactDigest(s)).not.toBe(exactDigest(r));
  });

  it('still keys an unknown field, and equal fields alike', () => {
    expect(partitionOf(plain({ instructions: 'x' }))).not.toBe(partitionOf(plain()));
    expect(partitionOf(plain({ instructions: 'x' }))).toBe(partitionOf(plain({ instructions: 'x' })));
  });
});

describe('canonicalJson', () => {
  it('sorts keys and drops undefined', () => {
    expect(canonicalJson({ b: 1, a: { d: [1, { y: 2, x: undefined }], c: null } })).toBe(
      '{"a":{"c":null,"d":[1,{"y":2}]},"b":1}',
    );
  });
});

describe('canonicalJson without recursion', () => {
  /** The reference: the recursive form this replaced (fine for shallow values). */
  const recursive = (v: unknown): string => {
    if (v === null || typeof v !== 'object') return JSON.stringify(v) ?? 'null';
    if (Array.isArray(v)) return `[${v.map(recursive).join(',')}]`;
    const entries = Object.entries(v as Record<string, unknown>)
      .filter(([, x]) => x !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, x]) => `${JSON.stringify(k)}:${recursive(x)}`).join(',')}}`;
  };

  it('writes exactly what the recursive form wrote, on varied shapes', () => {
    let seed = 7;
    const rnd = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const gen = (depth: number): unknown => {
      const r = rnd();
      if (depth === 0 || r < 0.3)
        return [null, true, false, 0, -1.5, 1e21, 'x', 'é"\\\n\u2028', '', undefined][Math.floor(rnd() * 10)];
      if (r < 0.6) return Array.from({ length: Math.floor(rnd() * 4) }, () => gen(depth - 1));
      return Object.fromEntries(
        Array.from({ length: Math.floor(rnd() * 4) }, (_, i) => [
          ['b', 'a', 'é', '"q"', '10', '9'][(i + Math.floor(rnd() * 6)) % 6]!,
          gen(depth - 1),
        ]),
      );
    };
    for (let i = 0; i < 300; i++) {
      const v = gen(6);
      expect(canonicalJson(v)).toBe(recursive(v));
    }
    expect(canonicalJson([])).toBe('[]');
    expect(canonicalJson({})).toBe('{}');
    expect(canonicalJson([undefined, 1])).toBe('[null,1]');
    expect(canonicalJson(undefined)).toBe('null');
  });

  it('handles nesting far beyond what the call stack allows', () => {
    const n = 50_000;
    const arrays = JSON.parse('['.repeat(n) + ']'.repeat(n)) as unknown;
    expect(canonicalJson(arrays)).toBe('['.repeat(n) + ']'.repeat(n));
    const objects = JSON.parse('{"b":1,"a":'.repeat(n) + '0' + '}'.repeat(n)) as unknown;
    expect(canonicalJson(objects)).toBe('{"a":'.repeat(n) + '0' + ',"b":1}'.repeat(n));
  });
});
