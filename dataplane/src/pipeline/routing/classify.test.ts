import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { describe, expect, it } from 'vitest';
import type { ChatMessage } from '../../formats/openai/types.ts';
import { classifyDifficulty } from './classify.ts';
import { evaluate, loadLabelled } from './evaluate.ts';

const level = (content: string) =>
  classifyDifficulty({ model: 'm', messages: [{ role: 'user', content }] }).level;
const dataFile = (name: string) =>
  fileURLToPath(new URL(`../../../../test/data/routing/${name}`, import.meta.url));

describe('classifyDifficulty', () => {
  it('sends greetings, lookups and short translations to trivial', () => {
    expect(level('hi there!')).toBe('trivial');
    expect(level('Who wrote Pride and Prejudice?')).toBe('trivial');
    expect(level('Translate to Spanish: the meeting is at noon.')).toBe('trivial');
  });

  it('keeps a long pasted text with a mechanical edit trivial', () => {
    const body =
      'Our comunity garden recieved a grant and will host a harvest festival in september. '.repeat(25);
    expect(level(`Fix the typos, change nothing else:\n\n${body}`)).toBe('trivial');
  });

  it('sends ordinary explanations, short code and summaries to standard', () => {
    expect(level('Explain how a hash map works.')).toBe('standard');
    expect(level('Write a Python function that checks whether a string is a palindrome.')).toBe('standard');
    const article =
      'Remote work has become a lasting part of many companies and changed city centres. '.repeat(12);
    expect(level(`Summarize this in three bullet points:\n\n${article}`)).toBe('standard');
  });

  it('recognises short but hard prompts', () => {
    expect(level('Prove that there are infinitely many primes.')).toBe('complex');
    expect(level('Beweise, dass √2 irrational ist.')).toBe('complex');
  });

  it('sends design, traces and analysis to complex', () => {
    expect(
      level(
        'Design a notification system for 50 million users with per-channel rate limits, retries and ' +
          'deduplication, and discuss the trade-offs of each component.',
      ),
    ).toBe('complex');
    const trace =
      'This crashes under load, why?\n```\njava.lang.IllegalStateException: closed\n' +
      '\tat com.acme.Pool.get(Pool.java:40)\n\tat com.acme.Api.handle(Api.java:88)\n```\n' +
      '```java\nclass Pool { synchronized Conn get() { return conns.poll(); } }\n```';
    expect(level(trace)).toBe('complex');
  });

  it('never routes a prompt with hard signals to trivial', () => {
    for (const t of ['Is the Collatz conjecture true?', 'Is P = NP?', 'is this thread safe? ```x++```'])
      expect(level(t), t).not.toBe('trivial');
  });

  it('treats thanks after a hard conversation as trivial', () => {
    const messages: ChatMessage[] = [
      { role: 'user', content: 'Design a multi-region ledger and prove it never double-spends.' },
      { role: 'assistant', content: 'Here is the design... '.repeat(50) },
      { role: 'user', content: 'thanks a lot!' },
    ];
    expect(classifyDifficulty({ model: 'm', messages }).level).toBe('trivial');
  });

  it('explains itself', () => {
    const d = classifyDifficulty({
      model: 'm',
      messages: [{ role: 'user', content: 'Prove Fermat’s little theorem' }],
    });
    expect(d.reasons[0]).toMatch(/^proof requested \(prove\) \+4$/);
    expect(d.score).toBeGreaterThan(4);
  });

  it('stays far below a millisecond on a 20k-token conversation', () => {
    const para = 'The pipeline builds each service and runs the integration suite against a fresh database. ';
    const messages: ChatMessage[] = [];
    for (let i = 0; i < 30; i++) {
      messages.push({ role: 'user', content: para.repeat(14) });
      messages.push({ role: 'assistant', content: para.repeat(16) });
    }
    messages.push({ role: 'user', content: 'Why did the canary pass even though latency rose?' });
    const times: number[] = [];
    for (let i = 0; i < 300; i++) {
      const start = performance.now();
      classifyDifficulty({ model: 'm', messages });
      times.push(performance.now() - start);
    }
    times.sort((a, b) => a - b);
    expect(times[150]).toBeLessThan(1);
  });
});

describe('labelled prompts (regression guard)', () => {
  for (const name of ['labelled.jsonl', 'holdout.jsonl']) {
    it(`${name}: accuracy ≥ 85 % and complex → trivial ≤ 1 %`, () => {
      const prompts = loadLabelled(dataFile(name));
      const e = evaluate(prompts, 1);
      const complex = prompts.filter((p) => p.level === 'complex').length;
      expect(e.accuracy).toBeGreaterThanOrEqual(0.85);
      expect(e.complexToTrivial).toBeLessThanOrEqual(Math.floor(complex * 0.01));
    });
  }

  it('the labelled set is large and balanced enough to mean something', () => {
    const prompts = loadLabelled(dataFile('labelled.jsonl'));
    expect(prompts.length).toBeGreaterThanOrEqual(330);
    for (const l of ['trivial', 'standard', 'complex'])
      expect(prompts.filter((p) => p.level === l).length, l).toBeGreaterThanOrEqual(100);
    expect(new Set(prompts.map((p) => p.id)).size).toBe(prompts.length);
  });
});
