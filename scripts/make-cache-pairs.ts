/**
 * Writes test/data/cache/templated.jsonl: look-alike pairs (same wording, one slot changed so
 * the meaning differs) and paraphrase pairs (same slots, reworded frame), from the templates
 * below. No public question-pair set without the reserved sources (Quora, GPTCache, MeanCache)
 * had both kinds, so these are written by us; nothing here was used to pick thresholds.
 * Deterministic: `npx tsx scripts/make-cache-pairs.ts`.
 */
import { writeFileSync } from 'node:fs';

interface Template {
  topic: string;
  /** Frames of one question; `{x}` and `{y}` are the slots. */
  frames: string[];
  /** Slot values; consecutive entries of `swaps` are look-alikes of each other. */
  values: [string, string][];
}

const templates: Template[] = [
  {
    topic: 'conversion',
    frames: [
      'How do I convert {x} to {y}?',
      'What is the way to turn {x} into {y}?',
      'Converting {x} into {y}: how is it done?',
    ],
    values: [
      ['Celsius', 'Fahrenheit'],
      ['Fahrenheit', 'Celsius'],
      ['miles', 'kilometres'],
      ['kilometres', 'miles'],
      ['a string', 'an integer in Python'],
      ['an integer', 'a string in Python'],
    ],
  },
  {
    topic: 'capital',
    frames: [
      'What is the capital of {x}?',
      'Which city is the capital of {x}?',
      'Tell me the capital city of {x}.',
    ],
    values: [
      ['Australia', ''],
      ['Austria', ''],
      ['Niger', ''],
      ['Nigeria', ''],
      ['Slovakia', ''],
      ['Slovenia', ''],
    ],
  },
  {
    topic: 'programming',
    frames: [
      'How do I {x} a list in {y}?',
      'In {y}, how can I {x} a list?',
      'What is the best way to {x} a list using {y}?',
    ],
    values: [
      ['sort', 'Python'],
      ['reverse', 'Python'],
      ['sort', 'JavaScript'],
      ['shuffle', 'JavaScript'],
      ['flatten', 'Java'],
      ['copy', 'Java'],
    ],
  },
  {
    topic: 'health',
    frames: [
      'Can I take {x} while {y}?',
      'Is it safe to take {x} when {y}?',
      'Should I avoid {x} while {y}?',
    ],
    values: [
      ['ibuprofen', 'pregnant'],
      ['paracetamol', 'pregnant'],
      ['aspirin', 'breastfeeding'],
      ['aspirin', 'on blood thinners'],
      ['antihistamines', 'driving'],
      ['antibiotics', 'drinking alcohol'],
    ],
  },
  {
    topic: 'direction',
    frames: [
      'How long is the flight from {x} to {y}?',
      'What is the flight time from {x} to {y}?',
      'How many hours does it take to fly from {x} to {y}?',
    ],
    values: [
      ['London', 'New York'],
      ['New York', 'London'],
      ['Paris', 'Tokyo'],
      ['Tokyo', 'Paris'],
      ['Sydney', 'Singapore'],
      ['Singapore', 'Sydney'],
    ],
  },
  {
    topic: 'git',
    frames: [
      'How do I {x} a {y} in git?',
      'What is the git command to {x} a {y}?',
      'In git, how can I {x} a {y}?',
    ],
    values: [
      ['delete', 'local branch'],
      ['delete', 'remote branch'],
      ['rename', 'local branch'],
      ['create', 'tag'],
      ['delete', 'tag'],
      ['undo', 'commit'],
    ],
  },
  {
    topic: 'finance',
    frames: [
      'Should I {x} my {y} before retiring?',
      'Is it wise to {x} my {y} before I retire?',
      'Does it make sense to {x} my {y} ahead of retirement?',
    ],
    values: [
      ['pay off', 'mortgage'],
      ['refinance', 'mortgage'],
      ['sell', 'house'],
      ['rent out', 'house'],
      ['cash out', 'pension'],
      ['top up', 'pension'],
    ],
  },
  {
    topic: 'cooking',
    frames: [
      'How long should I {x} {y}?',
      'For how many minutes do I {x} {y}?',
      'What is the right time to {x} {y}?',
    ],
    values: [
      ['boil', 'an egg'],
      ['poach', 'an egg'],
      ['bake', 'salmon'],
      ['grill', 'salmon'],
      ['roast', 'potatoes'],
      ['boil', 'potatoes'],
    ],
  },
  {
    topic: 'comparison',
    frames: [
      'Why is {x} faster than {y}?',
      'What makes {x} faster than {y}?',
      'For what reason is {x} quicker than {y}?',
    ],
    values: [
      ['TCP', 'UDP'],
      ['UDP', 'TCP'],
      ['C', 'Python'],
      ['Python', 'C'],
      ['an SSD', 'a hard drive'],
      ['a hard drive', 'an SSD'],
    ],
  },
  {
    topic: 'negation-free antonyms',
    frames: [
      'What causes {x} blood pressure in {y}?',
      'Why would {y} have {x} blood pressure?',
      'What are the reasons for {x} blood pressure in {y}?',
    ],
    values: [
      ['high', 'adults'],
      ['low', 'adults'],
      ['high', 'children'],
      ['low', 'children'],
      ['high', 'pregnancy'],
      ['low', 'pregnancy'],
    ],
  },
];

const fill = (frame: string, [x, y]: [string, string]): string =>
  frame
    .replace('{x}', x)
    .replace('{y}', y)
    .replace(/\s+([?.])/g, '$1')
    .replace(/\s{2,}/g, ' ');

const lines: string[] = [];
for (const t of templates) {
  // Paraphrases: the same slots in two different frames.
  t.values.forEach((v, i) => {
    const a = t.frames[i % t.frames.length] as string;
    const b = t.frames[(i + 1) % t.frames.length] as string;
    lines.push(JSON.stringify({ kind: 'paraphrase', topic: t.topic, a: fill(a, v), b: fill(b, v) }));
  });
  // Look-alikes: the same frame, neighbouring slot values.
  for (let i = 0; i + 1 < t.values.length; i++)
    for (const frame of t.frames)
      lines.push(
        JSON.stringify({
          kind: 'lookalike',
          topic: t.topic,
          a: fill(frame, t.values[i] as [string, string]),
          b: fill(frame, t.values[i + 1] as [string, string]),
        }),
      );
}
writeFileSync(new URL('../test/data/cache/templated.jsonl', import.meta.url), lines.join('\n') + '\n');
console.log(`${lines.length} pairs`);
