import type { GatewayError } from '../../errors.ts';
import type { ClientStreamEncoder } from '../encoder.ts';
import { sseData } from '../sse.ts';
import type { ChatChunk, Usage } from './types.ts';

/** OpenAI SSE: one `data:` per chunk, a usage chunk only when asked for, then [DONE]. */
export class OpenAIStreamEncoder implements ClientStreamEncoder {
  constructor(
    private readonly meta: { id: string; created: number; model: string },
    private readonly includeUsage: boolean,
  ) {}

  chunk(c: ChatChunk): string {
    return sseData(JSON.stringify(c));
  }

  finish(usage: Usage, model?: string): string {
    const tail = this.includeUsage
      ? sseData(
          JSON.stringify({
            ...this.meta,
            model: model ?? this.meta.model,
            object: 'chat.completion.chunk',
            choices: [],
            usage,
          }),
        )
      : '';
    return `${tail}data: [DONE]\n\n`;
  }

  fail(error: GatewayError): string {
    return sseData(JSON.stringify(error.toBody()));
  }
}
