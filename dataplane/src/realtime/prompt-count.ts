/**
 * The instructions and tool definitions a Realtime response reads besides the conversation. The
 * upstream bills them as input on every response (OpenAI's cost guide counts a turn's
 * instructions in its input), so the gateway's own count, which holds a response and prices one
 * cut short, must include them: a voice agent's first response with 4 KB of instructions was
 * held and charged as if it read nothing. Counted as other Realtime text (events.ts): 4
 * characters a token, tools by their JSON.
 *
 * The session's values are the upstream's word, as its output cap is (output-cap.ts): what
 * `session.created`/`session.updated` echo; while an update is unanswered the larger of the
 * confirmed and the requested, instructions and tools apart. A response's own `instructions` or
 * `tools` replace the session's for that response.
 */
import { isRecord, itemAudioTokens, itemTokens } from './events.ts';
import { SessionUpdates } from './session-updates.ts';

/** Tokens of text, as the gateway counts Realtime text: 4 characters a token. */
export const textTokens = (text: string): number => Math.ceil(text.length / 4);

interface Prompt {
  instructions: number;
  tools: number;
}

interface Stated {
  instructions: number | undefined;
  tools: number | undefined;
}

/** The instructions and tools a session or response object states (undefined where it states none). */
export function statedPrompt(o: unknown): Stated {
  if (!isRecord(o)) return { instructions: undefined, tools: undefined };
  return {
    instructions: typeof o.instructions === 'string' ? textTokens(o.instructions) : undefined,
    tools: Array.isArray(o.tools) ? textTokens(JSON.stringify(o.tools)) : undefined,
  };
}

/** The session's instructions and tools as the upstream confirmed them, and those of updates it has not answered. */
export class SessionPrompt {
  /** None until the upstream says (its `session.created` echoes its default instructions). */
  private confirmedPrompt: Prompt = { instructions: 0, tools: 0 };
  private readonly updates = new SessionUpdates(statedPrompt);

  /** A `session.update` sent upstream with `eventId`. */
  sent(eventId: string, session: unknown): void {
    this.updates.sent(eventId, session);
  }

  /** `session.created` (`answers` false) or `session.updated`: the session as the upstream has it. */
  confirmed(session: unknown, answers: boolean): void {
    const stated = this.updates.confirmed(session, answers);
    this.confirmedPrompt = {
      instructions: stated.instructions ?? this.confirmedPrompt.instructions,
      tools: stated.tools ?? this.confirmedPrompt.tools,
    };
  }

  /** An upstream `error` naming `eventId`: that update was not applied. */
  refused(eventId: string): void {
    this.updates.refused(eventId);
  }

  /**
   * The prompt tokens `response` (a `response.create`'s response, or none) reads: its own
   * instructions and tools where it states them, else the session's, the larger of confirmed and
   * pending (an update the upstream may still apply).
   */
  forResponse(response: unknown): number {
    let { instructions, tools } = this.confirmedPrompt;
    for (const stated of this.updates.unanswered()) {
      instructions = Math.max(instructions, stated.instructions ?? 0);
      tools = Math.max(tools, stated.tools ?? 0);
    }
    const own = statedPrompt(response);
    return (own.instructions ?? instructions) + (own.tools ?? tools);
  }
}

/** What the gateway knows of the input of the next response. */
export interface InputCount {
  /** The last in-band `response.done`'s input plus output (the upstream's count), 0 before one. */
  conversation: number;
  /** The prompt tokens the gateway counted for that response: its input already includes them. */
  conversationPrompt: number;
  /** Items and audio added since, by the gateway's count. */
  added: number;
  /** The prompt tokens in force for the response about to start. */
  prompt: number;
  /** The response's own `input` items, when it states them (`ownInput`). */
  own?: OwnInput;
}

/** A `response.create`'s own `input` items, counted as items added to the conversation are. */
export interface OwnInput {
  tokens: number;
  /** The audio among them. */
  audio: number;
  /** An `item_reference` names a conversation item, whose size the gateway does not keep. */
  referencesConversation: boolean;
}

/**
 * A response's own `input` (undefined where it states none). OpenAI's reference: `input` "creates
 * a new context for this Response instead of using the default conversation" (`[]` clears it),
 * whatever `conversation` says, which only decides where the answer goes. The upstream bills
 * those items as input: an out-of-band response with 4 KB of them was held and, cut short,
 * charged as if it read none.
 */
export function ownInput(response: unknown): OwnInput | undefined {
  if (!isRecord(response) || !Array.isArray(response.input)) return undefined;
  const own: OwnInput = { tokens: 0, audio: 0, referencesConversation: false };
  for (const item of response.input) {
    own.tokens += itemTokens(item);
    own.audio += itemAudioTokens(item);
    if (isRecord(item) && item.type === 'item_reference') own.referencesConversation = true;
  }
  return own;
}

/**
 * The input a response reads by the gateway's own count. `response.done`'s `input_tokens` is
 * everything the model read (instructions, tools and the conversation items, cached ones among
 * them), so the prompt counted for that response is taken out before this one's is put in:
 * an unchanged prompt is counted once, a changed one at its new size. A prompt estimate above
 * the upstream's whole count leaves the conversation part at 0, never negative. A response with
 * its own `input` reads those items instead of the conversation; one naming a conversation item
 * is counted the whole conversation besides, an upper bound of what it names.
 */
export function responseInputTokens(c: InputCount): number {
  const conversation = Math.max(0, c.conversation - c.conversationPrompt) + c.added;
  if (c.own === undefined) return conversation + c.prompt;
  return c.own.tokens + (c.own.referencesConversation ? conversation : 0) + c.prompt;
}
