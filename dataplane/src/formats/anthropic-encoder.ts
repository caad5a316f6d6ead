import type { GatewayError } from '../errors.ts';
import { AnthropicStreamEncoder } from './anthropic/index.ts';
import type { ClientStreamEncoder } from './encoder.ts';
import type { ChatChunk, Usage } from './openai/types.ts';

/** The Anthropic Messages SSE dialect behind the common encoder interface. */
export class AnthropicClientEncoder implements ClientStreamEncoder {
  private readonly inner: AnthropicStreamEncoder;

  constructor(meta: { id: string; model: string }, inputTokens: number) {
    this.inner = new AnthropicStreamEncoder({ id: meta.id, model: meta.model, inputTokens });
  }

  chunk(c: ChatChunk): string {
    return this.inner.push(c);
  }

  finish(usage: Usage): string {
    const usageChunk: ChatChunk = {
      id: '',
      object: 'chat.completion.chunk',
      created: 0,
      model: '',
      choices: [],
      usage,
    };
    return this.inner.push(usageChunk) + this.inner.finish();
  }

  fail(error: GatewayError): string {
    return this.inner.error(error.type, error.message, error.status);
  }
}
