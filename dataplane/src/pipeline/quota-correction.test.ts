import { describe, expect, it } from 'vitest';
import { ticketTokens, type AnsweredPart } from './quota-correction.ts';

const part = (name: string, prompt: number, completion: number): AnsweredPart => ({
  deployment: { name },
  usage: { prompt_tokens: prompt, completion_tokens: completion },
});

describe('quota tickets and the parts that used them', () => {
  it('a stream continued from a no-quota deployment to a quota one corrects the latter with its own part', () => {
    // `free` has no quota, so only `paced` holds a ticket, while its part is the second.
    expect(ticketTokens([{ deployment: 'paced' }], [part('free', 10, 5), part('paced', 10, 40)])).toEqual([
      50,
    ]);
  });

  it("each deployment's tickets go with its own parts in order", () => {
    const parts = [part('a', 1, 1), part('b', 2, 2), part('a', 3, 3)];
    expect(ticketTokens([{ deployment: 'a' }, { deployment: 'b' }, { deployment: 'a' }], parts)).toEqual([
      2, 4, 6,
    ]);
  });

  it('a ticket without a part keeps its estimate', () => {
    expect(ticketTokens([{ deployment: 'a' }, { deployment: 'a' }], [part('a', 1, 1)])).toEqual([
      2,
      undefined,
    ]);
  });
});
