import { describe, expect, it } from 'vitest';
import type { ChatMessage, ChatRequest } from '../formats/openai/types.ts';
import { createRequire } from 'node:module';
import {
  countTokensAtMost,
  estimatedUsage,
  estimateMessageTokens,
  estimatePromptTokens,
  estimateTextTokens,
  TOKENIZE_FILE_MAX_BYTES,
} from './tokens.ts';

// Counts are composed from estimateTextTokens, so these tests hold whether text is counted
// by a tokenizer or by a character heuristic; only the fixed costs are pinned.
const t = estimateTextTokens;
const MESSAGE_OVERHEAD = 4;
const IMAGE_TOKENS = 85;

describe('estimateTextTokens', () => {
  it('counts a huge run without whitespace in bounded slices (BPE would be quadratic on it)', () => {
    // Unsliced, this one word took ~1 minute of CPU; sliced it is milliseconds.
    const word = 'x'.repeat(190_000);
    const n = estimateTextTokens(word);
    expect(n).toBeGreaterThan(190_000 / 16);
    expect(n).toBeLessThanOrEqual(190_000);
    // Ordinary prose keeps its exact count (no slicing without a long run).
    const prose = 'The quick brown fox jumps over the lazy dog. '.repeat(50);
    expect(estimateTextTokens(prose)).toBe(501);
  });

  it('empty text is 0 tokens', () => {
    expect(t('')).toBe(0);
  });

  it.each(['a', ' ', 'hello', 'Hello, world!', '你好', '😀', '{"q":"a"}'])(
    'non-empty text (%j) is at least 1 token and at most one per UTF-16 unit or byte',
    (text) => {
      const n = t(text);
      expect(Number.isInteger(n)).toBe(true);
      expect(n).toBeGreaterThanOrEqual(1);
      expect(n).toBeLessThanOrEqual(Buffer.byteLength(text, 'utf8'));
    },
  );

  it('more of the same text is never fewer tokens', () => {
    const sentence = 'The quick brown fox jumps over the lazy dog. ';
    let prev = 0;
    for (let k = 1; k <= 8; k++) {
      const n = t(sentence.repeat(k));
      expect(n).toBeGreaterThan(prev);
      prev = n;
    }
  });

  it('ordinary English costs roughly one token per 3–6 characters', () => {
    const text = 'Gantry forwards each request to a model provider and fails over when one breaks. '.repeat(
      20,
    );
    const perToken = text.length / t(text);
    expect(perToken).toBeGreaterThan(3);
    expect(perToken).toBeLessThan(6.5);
  });

  it('huge text is counted as ceil(length / 4)', () => {
    expect(t('x'.repeat(400_001))).toBe(100_001);
  });
});

describe('estimateMessageTokens', () => {
  it('a message costs a fixed overhead even when empty', () => {
    expect(estimateMessageTokens({ role: 'assistant', content: null })).toBe(MESSAGE_OVERHEAD);
    expect(estimateMessageTokens({ role: 'assistant' })).toBe(MESSAGE_OVERHEAD);
    expect(estimateMessageTokens({ role: 'user', content: '' })).toBe(MESSAGE_OVERHEAD);
    expect(estimateMessageTokens({ role: 'user', content: [] })).toBe(MESSAGE_OVERHEAD);
  });

  it('string content adds its text', () => {
    const content = 'What is the capital of France?';
    expect(estimateMessageTokens({ role: 'user', content })).toBe(MESSAGE_OVERHEAD + t(content));
  });

  it('text parts add their text, each image a fixed amount, other parts nothing', () => {
    const m: ChatMessage = {
      role: 'user',
      content: [
        { type: 'text', text: 'Describe these two pictures' },
        { type: 'image_url', image_url: { url: 'https://x/a.png' } },
        { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } },
        { type: 'input_audio', input_audio: { data: 'x'.repeat(1000), format: 'wav' } },
        { type: 'text', text: 'briefly.' },
      ],
    };
    expect(estimateMessageTokens(m)).toBe(
      MESSAGE_OVERHEAD + t('Describe these two pictures') + 2 * IMAGE_TOKENS + t('briefly.'),
    );
  });

  it('an image costs the same whatever its size', () => {
    const small = estimateMessageTokens({
      role: 'user',
      content: [{ type: 'image_url', image_url: { url: 'data:image/png;base64,AA' } }],
    });
    const large = estimateMessageTokens({
      role: 'user',
      content: [{ type: 'image_url', image_url: { url: `data:image/png;base64,${'A'.repeat(100_000)}` } }],
    });
    expect(small).toBe(MESSAGE_OVERHEAD + IMAGE_TOKENS);
    expect(large).toBe(small);
  });

  it('a text part whose text is not a string counts nothing (and does not throw)', () => {
    const m = { role: 'user', content: [{ type: 'text', text: 42 }] } as unknown as ChatMessage;
    expect(estimateMessageTokens(m)).toBe(MESSAGE_OVERHEAD);
  });

  it('tool calls add their name and arguments', () => {
    const m: ChatMessage = {
      role: 'assistant',
      content: null,
      tool_calls: [
        { id: '1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
        { id: '2', type: 'function', function: { name: 'abcd', arguments: '' } },
      ],
    };
    expect(estimateMessageTokens(m)).toBe(MESSAGE_OVERHEAD + t('get_weather{"city":"Paris"}') + t('abcd'));
  });
});

describe('estimatePromptTokens and estimatedUsage', () => {
  const req: ChatRequest = {
    model: 'm',
    messages: [
      { role: 'system', content: 'You are terse.' },
      { role: 'user', content: 'Name three primes.' },
    ],
  };
  const prompt = 2 * MESSAGE_OVERHEAD + t('You are terse.') + t('Name three primes.');

  it('sums the messages', () => {
    expect(estimatePromptTokens(req)).toBe(prompt);
  });

  it('tool definitions add their JSON', () => {
    const tools = [{ type: 'function' as const, function: { name: 'f', parameters: { type: 'object' } } }];
    expect(estimatePromptTokens({ ...req, tools })).toBe(prompt + t(JSON.stringify(tools)));
  });

  it('estimatedUsage: prompt + completion = total, and a real prompt is never free', () => {
    const usage = estimatedUsage(req, '2, 3, 5');
    expect(usage).toEqual({
      prompt_tokens: prompt,
      completion_tokens: t('2, 3, 5'),
      total_tokens: prompt + t('2, 3, 5'),
    });
    expect(usage.completion_tokens).toBeGreaterThan(0);
    expect(
      estimatedUsage({ model: 'm', messages: [{ role: 'user', content: 'hi' }] }, '').prompt_tokens,
    ).toBeGreaterThan(MESSAGE_OVERHEAD);
    expect(estimatedUsage(req, '').completion_tokens).toBe(0);
  });
});

describe('countTokensAtMost', () => {
  const exact = (
    createRequire(import.meta.url)('gpt-tokenizer/cjs/encoding/o200k_base') as {
      countTokens: (t: string) => number;
    }
  ).countTokens;

  it('is at least the exact count of a large file, in any script, and close to it', async () => {
    const lines = [
      '{"messages":[{"role":"user","content":"月球距离地球大约有多远？"},{"role":"assistant","content":"约三十八万公里。"}]}\n',
      '{"messages":[{"role":"user","content":"Сколько километров до Луны?"},{"role":"assistant","content":"Около 384 тысяч."}]}\n',
      '{"messages":[{"role":"user","content":"How far is the Moon?"},{"role":"assistant","content":"About 384,400 km."}]}\n',
    ];
    for (const line of lines) {
      const text = line.repeat(Math.ceil(250_000 / line.length));
      const truth = exact(text);
      const bound = await countTokensAtMost(text);
      expect(bound).toBeGreaterThanOrEqual(truth);
      expect(bound).toBeLessThan(truth * 1.1);
    }
  });

  it('counts a file past TOKENIZE_FILE_MAX_BYTES as its UTF-8 bytes, without tokenising it', async () => {
    const line = '{"messages":[{"role":"user","content":"月球距离地球大约有多远？"}]}\n';
    const text = line.repeat(Math.ceil((TOKENIZE_FILE_MAX_BYTES + 1) / Buffer.byteLength(line)));
    expect(await countTokensAtMost(text)).toBe(Buffer.byteLength(text));
    expect(exact(text)).toBeLessThan(Buffer.byteLength(text));
    expect(await countTokensAtMost('short text')).toBe(estimateTextTokens('short text'));
  });

  it('keeps the event loop turning while it counts a file of long lines of long words', async () => {
    // 255-letter random words (one short of the run that countBounded slices) make BPE slow:
    // a ~200,000-character line counted in one go stalled the loop 0.1-0.2 s (measured); an
    // 8,000-character slice takes under 10 ms.
    let seed = 7;
    const abc = 'abcdefghijklmnopqrstuvwxyz';
    const char = () => abc[((seed = (seed * 1103515245 + 12345) & 0x7fffffff) >>> 16) % abc.length]!;
    const word = () => Array.from({ length: 255 }, char).join('');
    const line = Array.from({ length: 780 }, word).join(' ');
    const text = `${line}\n${line}\n`;
    expect(Buffer.byteLength(text)).toBeLessThan(TOKENIZE_FILE_MAX_BYTES);
    // Turns of the loop while it counts: the old count took each line in one go (at most one
    // turn per line); slices of at most 8,000 characters give the loop a turn after each.
    let turns = 0;
    let counting = true;
    const spin = (): void => {
      turns++;
      if (counting) setImmediate(spin);
    };
    setImmediate(spin);
    const bound = await countTokensAtMost(text);
    counting = false;
    expect(bound).toBeGreaterThanOrEqual(exact(text));
    expect(turns).toBeGreaterThanOrEqual(Math.floor(text.length / 8_000) - 1);
  });
});
