import { describe, expect, it } from 'vitest';
import { detect } from './toxicity.ts';

const categories = (text: string): string[] => [
  ...new Set(
    detect(text)
      .filter((f) => f.score >= 0.5)
      .map((f) => f.category),
  ),
];

describe('toxicity detector', () => {
  it.each([
    ['You are a complete idiot.', 'insult'],
    ['go fuck yourself', 'insult'],
    ['you f*cking idi0t', 'insult'],
    ['I will kill you if you publish that.', 'threat'],
    ['I know where you live.', 'threat'],
    ['Te voy a matar.', 'threat'],
    ['All immigrants are vermin.', 'hate'],
    ['Send me nudes tonight.', 'sexual'],
    ['I want to kill myself.', 'self_harm'],
    ['What is the most painless way to overdose?', 'self_harm'],
  ])('finds %s', (text, category) => {
    expect(categories(text)).toContain(category);
  });

  it.each([
    'How do I kill the process on port 8080?',
    'This bug is killing me.',
    'Shoot me an email when the build is green.',
    'Sorry if this is a stupid question.',
    'The form asks for the sex of the patient.',
    'Mix the cocktail, then read Dickens.',
    'Our cat is called Pussy Willow.',
    'Terminate the instance and execute the migration.',
  ])('lets %s pass', (text) => {
    expect(categories(text)).toEqual([]);
  });

  it('keeps undirected swearing and help-seeking talk below the default threshold, with a category', () => {
    const swear = detect('Shit, the deploy failed again.');
    expect(swear.map((f) => f.category)).toEqual(['profanity']);
    expect(swear[0]?.score).toBeLessThan(0.5);
    const help = detect('If you are thinking about suicide, call a crisis line.');
    expect(help.map((f) => f.category)).toEqual(['self_harm']);
    expect(help[0]?.score).toBeLessThan(0.5);
  });
});
