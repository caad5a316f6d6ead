import { describe, expect, it } from 'vitest';
import { itemTokens } from './events.ts';
import { ownInput, responseInputTokens, SessionPrompt, statedPrompt, textTokens } from './prompt-count.ts';

const INSTRUCTIONS = 'You are a careful phone agent. '.repeat(130); // ~4 KB
const TOOLS = [
  {
    type: 'function',
    name: 'lookup_order',
    description: 'Find an order by its number',
    parameters: { type: 'object', properties: { order: { type: 'string' } }, required: ['order'] },
  },
];
const instructionTokens = textTokens(INSTRUCTIONS);
const toolTokens = textTokens(JSON.stringify(TOOLS));

describe('statedPrompt', () => {
  it('counts instructions at 4 characters a token and tools by their JSON', () => {
    expect(INSTRUCTIONS.length).toBeGreaterThan(4000);
    expect(statedPrompt({ instructions: INSTRUCTIONS, tools: TOOLS })).toEqual({
      instructions: Math.ceil(INSTRUCTIONS.length / 4),
      tools: Math.ceil(JSON.stringify(TOOLS).length / 4),
    });
    expect(statedPrompt({ instructions: 7, tools: 'x' })).toEqual({
      instructions: undefined,
      tools: undefined,
    });
    expect(statedPrompt(undefined)).toEqual({ instructions: undefined, tools: undefined });
  });
});

describe('SessionPrompt', () => {
  it('counts what the upstream confirmed, the larger of it and an unanswered update meanwhile', () => {
    const p = new SessionPrompt();
    expect(p.forResponse(undefined)).toBe(0);
    p.sent('u1', { instructions: INSTRUCTIONS, tools: TOOLS });
    expect(p.forResponse(undefined)).toBe(instructionTokens + toolTokens);
    // The upstream applied it: its echo is the count.
    p.confirmed({ instructions: INSTRUCTIONS, tools: TOOLS }, true);
    expect(p.forResponse(undefined)).toBe(instructionTokens + toolTokens);
    // Shorter instructions asked for: the longer ones count until the upstream confirms.
    p.sent('u2', { instructions: 'Be brief.' });
    expect(p.forResponse(undefined)).toBe(instructionTokens + toolTokens);
    p.confirmed({ instructions: 'Be brief.', tools: TOOLS }, true);
    expect(p.forResponse(undefined)).toBe(textTokens('Be brief.') + toolTokens);
  });

  it('leaves the session as it was after an update the upstream refused', () => {
    const p = new SessionPrompt();
    p.confirmed({ instructions: 'Be brief.' }, false);
    p.sent('u1', { instructions: INSTRUCTIONS });
    p.refused('u1');
    expect(p.forResponse(undefined)).toBe(textTokens('Be brief.'));
  });

  it("counts a response's own instructions and tools instead of the session's", () => {
    const p = new SessionPrompt();
    p.confirmed({ instructions: INSTRUCTIONS, tools: TOOLS }, false);
    expect(p.forResponse({ instructions: 'Say goodbye.' })).toBe(textTokens('Say goodbye.') + toolTokens);
    expect(p.forResponse({ tools: [] })).toBe(instructionTokens + textTokens('[]'));
  });
});

describe('responseInputTokens', () => {
  const prompt = instructionTokens + toolTokens;

  it('counts the prompt on a first response, before any report', () => {
    expect(responseInputTokens({ conversation: 0, conversationPrompt: 0, added: 20, prompt })).toBe(
      prompt + 20,
    );
  });

  it('counts an unchanged prompt once after a response.done, whose input already includes it', () => {
    // The first response read the prompt and 20 tokens, and answered 50: the upstream reports it all.
    const conversation = prompt + 20 + 50;
    expect(responseInputTokens({ conversation, conversationPrompt: prompt, added: 10, prompt })).toBe(
      prompt + 20 + 50 + 10,
    );
  });

  it('counts a changed prompt at its new size', () => {
    const conversation = prompt + 70;
    expect(responseInputTokens({ conversation, conversationPrompt: prompt, added: 0, prompt: 3 })).toBe(73);
  });

  it('never takes out more than the report had', () => {
    expect(responseInputTokens({ conversation: 100, conversationPrompt: 500, added: 5, prompt: 500 })).toBe(
      505,
    );
  });

  describe("a response's own input", () => {
    const item = {
      type: 'message',
      role: 'user',
      content: [{ type: 'input_text', text: 'Classify this call: '.repeat(200) }],
    };
    const base = { conversation: prompt + 900, conversationPrompt: prompt, added: 40, prompt };

    it('counts its items instead of the conversation, whatever `conversation` says', () => {
      for (const conversation of ['none', 'auto', undefined]) {
        const own = ownInput({ conversation, input: [item, item] });
        expect(own).toEqual({ tokens: 2 * itemTokens(item), audio: 0, referencesConversation: false });
        expect(responseInputTokens({ ...base, own })).toBe(2 * itemTokens(item) + prompt);
      }
      expect(itemTokens(item)).toBeGreaterThan(1000);
      // `[]` clears the context: the prompt alone.
      expect(responseInputTokens({ ...base, own: ownInput({ input: [] }) })).toBe(prompt);
    });

    it('reads the conversation where it states no input', () => {
      expect(ownInput({ conversation: 'none' })).toBeUndefined();
      expect(ownInput(undefined)).toBeUndefined();
      expect(responseInputTokens({ ...base, own: ownInput({ conversation: 'none' }) })).toBe(
        900 + 40 + prompt,
      );
    });

    it('counts the conversation besides when an item names one of its items', () => {
      const ref = { type: 'item_reference', id: 'item_1' };
      const own = ownInput({ conversation: 'none', input: [ref, item] });
      expect(own?.referencesConversation).toBe(true);
      expect(responseInputTokens({ ...base, own })).toBe(
        itemTokens(ref) + itemTokens(item) + 900 + 40 + prompt,
      );
    });

    it('counts the audio among its items', () => {
      const audio = Buffer.alloc(48_000 * 3).toString('base64');
      const own = ownInput({
        input: [{ type: 'message', role: 'user', content: [{ type: 'input_audio', audio }] }],
      });
      expect(own?.audio).toBe(30);
      expect(own?.tokens).toBeGreaterThanOrEqual(30);
    });
  });
});
