import { describe, expect, it } from 'vitest';
import { OPENAI_CATEGORIES, moderate, verdictOf } from './verdict.ts';

describe('moderation verdicts', () => {
  it('flags an insult as harassment and leaves a polite text unflagged with every category present', () => {
    const rude = moderate('you are a stupid worthless idiot', 0.5);
    expect(rude.flagged).toBe(true);
    expect(rude.categories.harassment).toBe(true);
    expect(rude.category_applied_input_types.harassment).toEqual(['text']);
    const polite = moderate('Could you summarise this article for me?', 0.5);
    expect(polite.flagged).toBe(false);
    expect(Object.keys(polite.category_scores).sort()).toEqual([...OPENAI_CATEGORIES].sort());
  });

  it('maps detector categories and keeps the highest score per OpenAI category', () => {
    const v = verdictOf(
      [
        { guardrail: 'toxicity', category: 'threat', score: 0.7, start: 0, end: 1 },
        { guardrail: 'toxicity', category: 'insult', score: 0.4, start: 0, end: 1 },
        { guardrail: 'toxicity', category: 'profanity', score: 0.3, start: 0, end: 1 },
      ],
      0.5,
    );
    expect(v.category_scores['harassment/threatening']).toBe(0.7);
    expect(v.category_scores.violence).toBe(0.7);
    expect(v.category_scores.harassment).toBe(0.4);
    expect(v.categories.harassment).toBe(false);
    expect(v.flagged).toBe(true);
  });
});
