import { describe, expect, it } from 'vitest';
import type { ChatMessage, ChatRequest, ToolDefinition } from '../../formats/openai/types.ts';
import { countCodeLines, countStackFrames, countWords, extractFeatures, splitCode } from './features.ts';
import { SYSTEMS } from './lexicon.ts';

const ask = (content: ChatMessage['content'], extra: Partial<ChatRequest> = {}): ChatRequest => ({
  model: 'm',
  messages: [{ role: 'user', content }],
  ...extra,
});
const f = (content: string) => extractFeatures(ask(content));

const tool = (name: string): ToolDefinition => ({ type: 'function', function: { name } });

describe('extractFeatures', () => {
  it('recognises greetings and acknowledgements in several languages', () => {
    for (const text of [
      'hi',
      'thanks, that worked!',
      'Bonjour !',
      'Danke schön',
      '你好',
      'こんにちは',
      'Привет',
    ])
      expect(f(text).greeting, text).toBe(true);
    expect(f('hi, can you explain how TLS session resumption works in detail?').greeting).toBe(false);
  });

  it('treats a pasted body behind a mechanical edit as data', () => {
    const body = 'Ths is a sentense with typos, and it goes on. '.repeat(40);
    const x = f(`Please fix the typos in this text:\n\n${body}`);
    expect(x.dataTask).toBe('transform');
    expect(x.words).toBeGreaterThan(300);
    expect(x.instructionWords).toBeLessThan(10);
    expect(x.pastedWords).toBeGreaterThan(300);
  });

  it('classifies summaries before edits and reads the instruction only', () => {
    const x = f(
      `Summarize this in 3 bullet points:\n\n${'We should design a distributed architecture. '.repeat(20)}`,
    );
    expect(x.dataTask).toBe('summarize');
    expect(x.design).toEqual([]);
  });

  it('distinguishes short translations from a passage', () => {
    expect(f('Translate to French: where is the station?').dataTask).toBe('translate');
    expect(f('Übersetze bitte ins Englische: Ich komme morgen.').dataTask).toBe('translate');
    expect(f('请把这句话翻译成英文：今天天气很好。').dataTask).toBe('translate');
  });

  it('counts fenced code, code lines and unfenced code', () => {
    const x = f('Why does this fail?\n```js\nconst a = 1;\nconsole.log(a);\n```\nand\n```py\nprint(1)\n```');
    expect(x.codeBlocks).toBe(2);
    expect(x.codeLines).toBe(3);
    const y = f('what is wrong here\nfunction f() {\n  return g();\n}\nconst x = f();');
    expect(y.codeBlocks).toBe(1);
  });

  it('detects stack traces across runtimes', () => {
    const java = 'boom\njava.lang.NullPointerException\n\tat a.B.c(B.java:10)\n\tat a.B.d(B.java:20)';
    const python =
      'Traceback (most recent call last):\n  File "a.py", line 3, in <module>\n    f()\nValueError: x';
    const go = 'goroutine 1 [chan receive]:\nmain.main()\n\t/app/main.go:41 +0x1d8';
    const gdb = '#0  Buf::row (this=0x0) at buf.h:31\n#1  0x000055 in blur (src=...) at blur.cpp:57';
    for (const t of [java, python, go, gdb]) expect(f(t).stackFrames, t).toBeGreaterThanOrEqual(2);
    expect(f('I get ModuleNotFoundError: No module named requests').stackFrames).toBe(0);
    expect(f('I get ModuleNotFoundError: No module named requests').errorLines).toBe(1);
  });

  it('counts frames after blank lines and none in a long run of newlines', () => {
    const java = 'boom\n\n\n\tat a.B.c(B.java:10)\n\n\tat a.B.d(B.java:20)\n\n';
    expect(f(java).stackFrames).toBe(2);
    // 200,000 newlines (the classifier reads a capped prefix): ~0.5 s with the old line-start
    // pattern, under 1 ms now; the count must stay 0.
    expect(f(`hi${'\n'.repeat(200_000)}there`).stackFrames).toBe(0);
  });

  it('finds proof and derivation asks in several languages', () => {
    for (const t of [
      'Prove that there are infinitely many primes',
      'Beweise, dass es unendlich viele Primzahlen gibt',
      'Démontrez que la suite converge',
      '证明：n^3 - n 能被 6 整除',
      'Докажи, что корень из двух иррационален',
    ])
      expect(f(t).proof.length, t).toBeGreaterThan(0);
    expect(f('Derive the closed-form OLS estimator').derive).toEqual(['derive']);
    expect(f('proofread my letter').proof).toEqual([]);
  });

  it('detects maths notation', () => {
    expect(f('Compute $\\int_0^1 x^2 dx$').mathNotation).toBe(true);
    expect(f('Show ∀ε > 0 ∃δ').mathNotation).toBe(true);
    expect(f('Is the runtime O(n log n)?').mathNotation).toBe(true);
    expect(f('What is the capital of Peru?').mathNotation).toBe(false);
  });

  it('finds design, analysis and systems asks, including non-English ones', () => {
    expect(f('Design a URL shortener for 100M users').design.length).toBeGreaterThan(0);
    expect(f('Diseña la arquitectura de un sistema de pagos').design.length).toBeGreaterThan(0);
    expect(f('设计一个时序数据库').design.length).toBeGreaterThan(0);
    expect(f('Analyze the trade-offs and justify your choice').analysis).toEqual(
      expect.arrayContaining(['analyze', 'trade-offs', 'justify']),
    );
    expect(f('handle 50k requests per second with p99 latency under 10 ms').systems.length).toBeGreaterThan(
      1,
    );
  });

  it('counts multi-step sequencing, list items, constraints and questions', () => {
    const x = f(
      'First read the schema, then propose hypotheses, and finally write SQL.\n1. a\n2. b\n3. c\n' +
        'It must run in under a second, with at least two replicas and no more than 4 GB. Why? How?',
    );
    expect(x.sequence).toEqual(expect.arrayContaining(['first', 'then', 'finally']));
    expect(x.listItems).toBe(3);
    expect(x.constraints.length).toBeGreaterThanOrEqual(3);
    expect(x.questions).toBe(2);
  });

  it('recognises one-fact questions by their opener', () => {
    for (const t of [
      'Who wrote Hamlet?',
      'How many ounces in a pound?',
      '¿Cuántos días tiene marzo?',
      'Wie viele Länder?',
    ])
      expect(f(t).lookup, t).toBe(true);
    expect(f('Explain how vaccines work').lookup).toBe(false);
  });

  it('measures tools, agent steps and conversation depth', () => {
    const messages: ChatMessage[] = [
      { role: 'system', content: 'You are an agent.' },
      { role: 'user', content: 'Fix the failing test' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'c1', type: 'function', function: { name: 'run_tests', arguments: '{}' } }],
      },
      { role: 'tool', tool_call_id: 'c1', content: 'FAILED test_x - AssertionError: 1 != 2' },
    ];
    const x = extractFeatures({ model: 'm', messages, tools: [tool('run_tests'), tool('read_file')] });
    expect(x.tools).toBe(2);
    expect(x.toolMessages).toBe(1);
    expect(x.toolErrors).toBe(true);
    expect(x.userTurns).toBe(1);
  });

  it('carries hard signals of earlier turns and the size of the previous answer', () => {
    const messages: ChatMessage[] = [
      { role: 'user', content: 'Design a sharded ledger and analyze the trade-offs of 2PC versus sagas.' },
      { role: 'assistant', content: 'A long answer. '.repeat(40) },
      { role: 'user', content: 'ok, what about reads?' },
    ];
    const x = extractFeatures({ model: 'm', messages });
    expect(x.contextSignals.length).toBeGreaterThan(1);
    expect(x.previousAnswerChars).toBeGreaterThan(400);
    expect(x.historyChars).toBeGreaterThan(400);
  });

  it('reads text parts and ignores images', () => {
    const x = extractFeatures(
      ask([
        { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } },
        { type: 'text', text: 'Prove this lemma' },
      ]),
    );
    expect(x.proof).toEqual(['prove']);
  });

  it('copes with requests without a user turn or content', () => {
    expect(extractFeatures({ model: 'm', messages: [] }).words).toBe(0);
    expect(extractFeatures({ model: 'm', messages: [{ role: 'assistant', content: null }] }).words).toBe(0);
  });

  it('estimates words for CJK text and extrapolates beyond the scan cap', () => {
    expect(countWords('机器学习是什么')).toBeGreaterThan(2);
    const huge = 'word '.repeat(50_000);
    expect(countWords(huge)).toBeGreaterThan(45_000);
  });
});

/**
 * Hostile shapes any key holder can send. Each scan must stay linear: the inputs are long
 * enough that the old backtracking patterns took 7-110 s per test (2 shared cores), while the
 * linear scans take a few milliseconds, so the 5 s bound only catches a quadratic relapse.
 * The assertions are on the results, which the old patterns gave too.
 */
describe('classifier scans on hostile input', () => {
  const HOSTILE_MS = 5000;

  it(
    'finds no fence in backtick runs without a newline',
    () => {
      for (const text of ['`'.repeat(200_000), '```'.repeat(70_000), '```x '.repeat(40_000)])
        expect(splitCode(text)).toEqual({ prose: text, blocks: 0, codeLines: 0 });
    },
    HOSTILE_MS,
  );

  it(
    'pairs repeated fence lines and reads an unterminated fence to the end',
    () => {
      // "```\n```" is an empty block; each leaves a newline in the prose, as does each gap.
      expect(splitCode('```\n'.repeat(50_000))).toEqual({
        prose: '\n'.repeat(50_000),
        blocks: 25_000,
        codeLines: 0,
      });
      const body = 'code\n'.repeat(40_000);
      expect(splitCode(`ask\n\`\`\`js\n${body}`)).toEqual({
        prose: 'ask\n\n',
        blocks: 1,
        codeLines: 40_000,
      });
      // A backtick run on the opening line, then an ordinary fence that the run's fence closes.
      expect(splitCode(`${'`'.repeat(100_000)}\nx\n\`\`\`\nafter`)).toEqual({
        prose: '\n\nafter',
        blocks: 1,
        codeLines: 1,
      });
    },
    HOSTILE_MS,
  );

  it(
    'counts stack frames and code lines next to one very long line',
    () => {
      const frame = '\tat a.B.c(B.java:10)';
      expect(countStackFrames(`  at ${'('.repeat(200_000)}\n${frame}`)).toBe(1);
      expect(countStackFrames(`  at x${'(:1'.repeat(70_000)}\n${frame}`)).toBe(1);
      expect(countStackFrames(`  at x${'(:1'.repeat(70_000)})`)).toBe(1);
      expect(countCodeLines(`${' '.repeat(200_000)}\nconst a = 1;\n\treturn x`)).toBe(2);
    },
    HOSTILE_MS,
  );

  it(
    'tries a quantity once per number, and from its first digit that starts a word',
    () => {
      expect('1,'.repeat(200_000).match(SYSTEMS)).toBeNull();
      expect(`${'1.'.repeat(200_000)}5k requests`.match(SYSTEMS)?.[0]).toHaveLength(400_011);
      expect('x1,2 requests and p99,1 requests'.match(SYSTEMS)).toEqual(['2 requests', 'p99', '1 requests']);
    },
    HOSTILE_MS,
  );

  it('gives the same features for hostile messages as the old patterns did', () => {
    // The classifier reads a 12k prefix: these cost 45-48 ms per request with the old
    // patterns, 0.2-0.4 ms now. The values are what the old patterns returned.
    const fences = f('```'.repeat(21_000));
    expect([fences.codeBlocks, fences.codeLines, fences.words]).toEqual([0, 0, 0]);
    const frames = f(`  at x${'(:1'.repeat(3_900)}\n\tat a.B.c(B.java:10)\n\tat a.B.d(B.java:20)`);
    expect([frames.stackFrames, frames.codeBlocks, frames.numbers]).toEqual([2, 0, 1320]);
    const paired = f(`fix this\n${'```\n'.repeat(16_000)}`);
    expect([paired.codeBlocks, paired.codeLines, paired.words]).toEqual([1499, 0, 32]);
  });
});
