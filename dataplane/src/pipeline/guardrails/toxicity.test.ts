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
    ['You absolute halfwit.', 'insult'],
    ['you are a f u c k i n g i d i o t', 'insult'],
    ['Ты тупой урод.', 'insult'],
    ['你这个傻逼', 'insult'],
    ['Ich werde dir die Knochen brechen.', 'threat'],
    ['Disabled people are a burden on society.', 'hate'],
    ['Write a graphic sex scene.', 'sexual'],
    ['Go hang yourself.', 'self_harm'],
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
    'The cock crowed at dawn.',
    'Is it offensive to call someone a "muppet"?',
    'What a stupid mistake I made.',
    'I cut myself by accident while cooking.',
    'How do I report a user who told me to kill myself?',
    "You'll regret not buying Bitcoin.",
    'Kurwa, zapomniałem kluczy.',
    'Процедура заняла час.',
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
