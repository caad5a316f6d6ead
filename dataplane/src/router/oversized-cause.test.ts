import { describe, expect, it } from 'vitest';
import type { ChatRequest } from '../formats/openai/types.ts';
import { chatOversizedCause, legacyOversizedCause, OVERSIZED_BODY_BYTES } from './oversized-cause.ts';

const chat = (extra: Record<string, unknown> = {}): ChatRequest => ({
  model: 'm',
  messages: [{ role: 'user', content: 'hi' }],
  ...extra,
});

describe('chatOversizedCause: whether a chat-path request may ask for an event past the SSE bound', () => {
  it('a plain request does not: the deployment is at fault', () => {
    expect(chatOversizedCause(chat(), '{"model":"m"}')).toBeUndefined();
    expect(chatOversizedCause(chat({ echo: false, modalities: ['text'] }), undefined)).toBeUndefined();
    expect(
      chatOversizedCause(chat({ tools: [{ type: 'function', function: { name: 'f' } }] }), ''),
    ).toBeUndefined();
  });

  it('echo, image output in any of its spellings', () => {
    expect(chatOversizedCause(chat({ echo: true }), '')).toBe('echo');
    expect(chatOversizedCause(chat({ modalities: ['text', 'image'] }), '')).toBe('image output');
    expect(chatOversizedCause(chat({ tools: [{ type: 'image_generation' }] }), '')).toBe('image output');
    expect(
      chatOversizedCause(chat({ generationConfig: { responseModalities: ['TEXT', 'IMAGE'] } }), ''),
    ).toBe('image output');
  });

  it('a body of 8 MiB or more, counted in UTF-8 bytes', () => {
    expect(chatOversizedCause(chat(), 'x'.repeat(OVERSIZED_BODY_BYTES))).toBe('body of 8.0 MiB');
    expect(chatOversizedCause(chat(), 'x'.repeat(OVERSIZED_BODY_BYTES - 1))).toBeUndefined();
    // 3 bytes a character: a third as many characters reach it.
    expect(chatOversizedCause(chat(), '€'.repeat(Math.ceil(OVERSIZED_BODY_BYTES / 3)))).toBe(
      'body of 8.0 MiB',
    );
  });
});

describe('legacyOversizedCause', () => {
  it('echo in any form an upstream may read as true', () => {
    expect(legacyOversizedCause({ model: 'm', prompt: 'p', echo: true })).toBe('echo of the prompt');
    // Forwarded as sent; vLLM's lax parsing reads these as true, so the event is the caller's doing.
    for (const echo of [1, 'true', 'yes'])
      expect(legacyOversizedCause({ model: 'm', prompt: 'p', echo })).toBe('echo of the prompt');
  });

  it('nothing without echo', () => {
    expect(legacyOversizedCause({ model: 'm', prompt: 'p', logprobs: 5 })).toBeUndefined();
    expect(legacyOversizedCause({ model: 'm', prompt: 'p', echo: false })).toBeUndefined();
    expect(legacyOversizedCause({ model: 'm', prompt: 'p', echo: null })).toBeUndefined();
  });
});
