import { describe, expect, it } from 'vitest';
import type { ChatRequest } from '../../formats/openai/types.ts';
import { injectReasoningEffort } from './effort.ts';

const req: ChatRequest = { model: 'o3', messages: [{ role: 'user', content: 'hi' }], temperature: 0.2 };

describe('injectReasoningEffort', () => {
  it('sets reasoning_effort for a reasoning model without mutating the input', () => {
    const out = injectReasoningEffort(req, 'high', true);
    expect(out).toEqual({ ...req, reasoning_effort: 'high' });
    expect(req).not.toHaveProperty('reasoning_effort');
    expect(out.messages).toBe(req.messages);
  });

  it('leaves a model that does not reason untouched', () => {
    expect(injectReasoningEffort(req, 'high', false)).toBe(req);
  });

  it("keeps the client's explicit effort", () => {
    const own = { ...req, reasoning_effort: 'low' };
    expect(injectReasoningEffort(own, 'high', true)).toBe(own);
  });

  it('ignores an empty effort', () => {
    expect(injectReasoningEffort(req, '', true)).toBe(req);
  });
});
