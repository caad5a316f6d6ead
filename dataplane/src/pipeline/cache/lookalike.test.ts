import { describe, expect, it } from 'vitest';
import {
  extractFacts,
  factConflict,
  FACTS_MAX_CHARS,
  factsSignature,
  questionFacts,
  questionsConflict,
  type FactKind,
} from './lookalike.ts';

const conflict = (a: string, b: string): FactKind | undefined =>
  factConflict(extractFacts(a), extractFacts(b));

describe('factConflict', () => {
  it.each<[FactKind, string, string]>([
    ['number', 'Max ibuprofen dose for a 60 kg adult?', 'Max ibuprofen dose for a 6 kg adult?'],
    ['number', 'Give 2.5 mg of it', 'Give 25 mg of it'],
    ['number', 'Give 5 mg of it', 'Give 5 mcg of it'],
    ['number', 'Transfer $500 to savings', 'Transfer $5000 to savings'],
    ['number', 'Send 100 EUR to Anna', 'Send 100 USD to Anna'],
    ['number', 'Is 7 a prime?', 'Is 17 a prime?'],
    ['number', 'Convert Python 2 code to Python 3', 'Convert Python 3 code to Python 2'],
    ['number', 'How many mg of B12 per day?', 'How many mcg of B12 per day?'],
    ['number', 'What happened in 1989?', 'What happened in 1998?'],
    ['negation', 'Is it safe to mix these?', "Isn't it safe to mix these?"],
    ['negation', 'Should I take it with food?', 'Should I not take it with food?'],
    ['negation', 'Le café est bon ?', "Le café n'est pas bon ?"],
    ['negation', 'Ist das gefährlich?', 'Ist das nicht gefährlich?'],
    ['negation', '¿Es seguro?', '¿No es seguro?'],
    ['operation', 'Write SQL to SELECT all rows from orders', 'Write SQL to DELETE all rows from orders'],
    ['operation', 'How do I increase the heap size?', 'How do I decrease the heap size?'],
    ['operation', 'Sort them in ascending order', 'Sort them in descending order'],
    ['operation', 'Dose for an adult?', 'Dose for a child?'],
    ['quoted', 'What does "tergiversate" mean?', 'What does "prevaricate" mean?'],
    ['identifier', 'What does user_id hold?', 'What does user_name hold?'],
    ['identifier', 'Explain getUserById', 'Explain getUserByName'],
    ['operator', 'Is a >= b here?', 'Is a <= b here?'],
    ['operator', 'What is 6 / 3?', 'What is 6 * 3?'],
    ['entity', 'Is Paris bigger than Rome?', 'Is London bigger than Rome?'],
    ['entity', 'Who is the CEO of Apple?', 'Who is the CEO of Google?'],
    ['entity', 'Paris or Rome: which is older?', 'London or Rome: which is older?'],
  ])('sees a %s difference: %s / %s', (kind, a, b) => {
    expect(conflict(a, b)).toBe(kind);
    expect(conflict(b, a)).toBe(kind);
  });

  it.each<[string, string]>([
    ['What is the capital of France?', "what's the capital of france"],
    ['How do I reverse a list in Python?', 'How can I reverse a Python list?'],
    ['Take 1,000 mg daily', 'take 1000mg daily'],
    ['Is 7 a prime?', 'Is seven a prime?'],
    ['How do I make bread?', 'How do you make bread?'],
    ["Don't mix bleach and ammonia, right?", 'Do not mix bleach and ammonia, right?'],
    ['Explain how photosynthesis works', 'Describe how photosynthesis works'],
    ['Convert 10 miles to kilometres', 'convert 10 miles into kilometres please'],
    ['What’s the boiling point of water?', "What's the boiling point of water?"],
  ])('lets a paraphrase through: %s / %s', (a, b) => {
    expect(conflict(a, b)).toBeUndefined();
  });

  it('gives equal facts an equal signature and different facts a different one', () => {
    const sig = (t: string) => factsSignature(extractFacts(t));
    expect(sig('user: dose for 60 kg')).toBe(sig('user: dose for 60 kg'));
    expect(sig('user: dose for 60 kg')).not.toBe(sig('user: dose for 6 kg'));
  });

  it('compares questions too long for fact extraction exactly', () => {
    const long = 'word '.repeat(FACTS_MAX_CHARS / 4);
    expect(questionFacts(long)).toBeUndefined();
    expect(questionsConflict(long, undefined, long)).toBeUndefined();
    expect(questionsConflict(long, undefined, `${long}!`)).toBe('text');
    const q = 'dose for 60 kg';
    expect(questionsConflict(q, questionFacts(q), long)).toBe('text');
    expect(questionsConflict(q, questionFacts(q), 'dose for 6 kg')).toBe('number');
    expect(questionsConflict(q, questionFacts(q), 'Dose for 60 kg?')).toBeUndefined();
  });
});
