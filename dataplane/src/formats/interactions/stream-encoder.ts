/**
 * Canonical chat chunks → the Interactions API's server-sent events: `interaction.start`,
 * then per output `content.start` / `content.delta` / `content.stop`, then
 * `interaction.complete` carrying the whole interaction with its usage (or `error`).
 * Function calls are sent whole once their arguments are complete, as one delta.
 */
import type { GatewayError } from '../../errors.ts';
import type { ClientStreamEncoder } from '../encoder.ts';
import type { ChatChunk, FinishReason, Usage } from '../openai/types.ts';
import { callArguments, interactionObject, statusOf, type InteractionFrame } from './from-chat.ts';
import type { Interaction, InteractionContent } from './types.ts';

interface PendingCall {
  id: string;
  name: string;
  args: string;
}

export class InteractionsStreamEncoder implements ClientStreamEncoder {
  private started = false;
  private ended = false;
  private eventId = 0;
  private textIndex: number | undefined;
  private readonly outputs: InteractionContent[] = [];
  private readonly calls = new Map<number, PendingCall>();
  private finishReason: FinishReason | null = null;
  private sealed: string | undefined;
  /** The finished interaction (for the store), once sealed or finished. */
  completed: Interaction | undefined;

  constructor(private readonly frame: InteractionFrame) {}

  private event(type: string, body: Record<string, unknown>): string {
    this.eventId += 1;
    return `event: ${type}\ndata: ${JSON.stringify({ event_type: type, event_id: String(this.eventId), ...body })}\n\n`;
  }

  private start(): string {
    if (this.started) return '';
    this.started = true;
    return this.event('interaction.start', {
      interaction: interactionObject(this.frame, 'in_progress', [], undefined),
    });
  }

  chunk(c: ChatChunk): string {
    if (this.ended) return '';
    let out = this.start();
    const choice = c.choices.find((x) => x.index === 0);
    if (!choice) return out;
    const text = choice.delta.content;
    if (typeof text === 'string' && text !== '') {
      if (this.textIndex === undefined) {
        this.textIndex = this.outputs.length;
        this.outputs.push({ type: 'text', text: '' });
        out += this.event('content.start', { index: this.textIndex, content: { type: 'text' } });
      }
      const item = this.outputs[this.textIndex] as { text: string };
      item.text += text;
      out += this.event('content.delta', { index: this.textIndex, delta: { type: 'text', text } });
    }
    for (const t of choice.delta.tool_calls ?? []) {
      const call = this.calls.get(t.index) ?? { id: '', name: '', args: '' };
      if (t.id) call.id = t.id;
      if (t.function?.name) call.name += t.function.name;
      if (t.function?.arguments) call.args += t.function.arguments;
      this.calls.set(t.index, call);
    }
    if (choice.finish_reason) this.finishReason = choice.finish_reason;
    return out;
  }

  /** Closes every output; the text first (it was open), then the function calls whole. */
  private closeOutputs(): string {
    let out = '';
    if (this.textIndex !== undefined) out += this.event('content.stop', { index: this.textIndex });
    this.textIndex = undefined;
    for (const call of [...this.calls.entries()].sort((a, b) => a[0] - b[0]).map((e) => e[1])) {
      const index = this.outputs.length;
      const content: InteractionContent = {
        type: 'function_call',
        id: call.id,
        name: call.name,
        arguments: callArguments(call.args),
      };
      this.outputs.push(content);
      out += this.event('content.start', {
        index,
        content: { type: 'function_call', id: call.id, name: call.name },
      });
      out += this.event('content.delta', { index, delta: content });
      out += this.event('content.stop', { index });
    }
    this.calls.clear();
    return out;
  }

  private end(usage: Usage): string {
    if (this.ended) return '';
    const out = this.start() + this.closeOutputs();
    this.ended = true;
    this.completed = interactionObject(this.frame, statusOf(this.finishReason), this.outputs, usage);
    return out + this.event('interaction.complete', { interaction: this.completed });
  }

  /** Ends the outputs before the final event is written, so the caller can store first. */
  seal(usage: Usage): Interaction {
    this.sealed ??= this.end(usage);
    return this.completed!;
  }

  finish(usage: Usage): string {
    if (this.sealed !== undefined) {
      const text = this.sealed;
      this.sealed = '';
      return text;
    }
    return this.end(usage);
  }

  fail(error: GatewayError): string {
    if (this.ended) return '';
    this.ended = true;
    const code = error.status >= 500 ? 'server_error' : error.type;
    return this.start() + this.event('error', { error: { code, message: error.message } });
  }
}
