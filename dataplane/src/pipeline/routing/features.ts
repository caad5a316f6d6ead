/**
 * Feature extraction for difficulty routing. Reads the last user turn in full (up to a cap)
 * and only cheap aggregates of the rest of the conversation, so a 20k-token history costs
 * about as much as a short chat. Every feature is a plain number, flag or list of matched
 * words, so the scorer's reasons can name exactly what it saw.
 */
import type { ChatMessage, ChatRequest } from '../../formats/openai/types.ts';
import {
  ANALYSIS,
  BREVITY,
  CONSTRAINT,
  DERIVE,
  DESIGN,
  ENGINEERING,
  GREETING,
  LOOKUP,
  MATH,
  PROOF,
  RESEARCH,
  SEQUENCE,
  SUMMARIZE,
  SYSTEMS,
  TASK,
  TRANSLATE,
  TRIVIAL_TRANSFORM,
} from './lexicon.ts';

export interface DifficultyFeatures {
  /** Estimated words in the last user turn (CJK characters weighted). */
  words: number;
  /** Words of the instruction itself; for a transformation, the pasted body is left out. */
  instructionWords: number;
  /** The turn is only a greeting, thanks or acknowledgement. */
  greeting: boolean;
  /**
   * The ask works on text the user pasted: a mechanical edit (fix typos, sort, reformat),
   * a translation or a summary. The pasted body is then data, not part of the ask.
   */
  dataTask: 'transform' | 'translate' | 'summarize' | null;
  /** Words of pasted body behind a data task. */
  pastedWords: number;
  /** Opens like a one-fact question. */
  lookup: boolean;
  /** Asks for a short answer. */
  brevity: boolean;
  /** Ordinary task verbs (explain, write, summarise, ...). */
  task: string[];
  proof: string[];
  derive: string[];
  analysis: string[];
  design: string[];
  systems: string[];
  engineering: string[];
  research: string[];
  math: string[];
  mathNotation: boolean;
  /** Distinct sequencing words ("first", "then", "finally"). */
  sequence: string[];
  /** Distinct constraint phrases ("at least", "must", "budget"). */
  constraints: string[];
  listItems: number;
  /** Sentences that enumerate (three or more commas): breadth of the requirements. */
  enumerations: number;
  questions: number;
  /** Numeric quantities in the prose (a proxy for concrete requirements). */
  numbers: number;
  codeBlocks: number;
  codeLines: number;
  stackFrames: number;
  errorLines: number;
  tools: number;
  toolMessages: number;
  /** A recent tool result carries an error or a stack trace. */
  toolErrors: boolean;
  userTurns: number;
  historyChars: number;
  /** Length of the assistant answer the last turn follows up on. */
  previousAnswerChars: number;
  /** Hard-task signals in the previous user turns (carried into short follow-ups). */
  contextSignals: string[];
}

/** Scan caps: instructions sit at the start or end of a turn; pasted bodies in between. */
const HEAD = 3000;
const TAIL = 1000;
const STRUCTURE_CAP = 12000;
const WORD_SAMPLE = 4000;
const CONTEXT_CAP = 2000;

export function textOf(content: ChatMessage['content']): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  let out = '';
  for (const part of content) {
    if (part.type === 'text' && typeof part.text === 'string') out += (out ? '\n' : '') + part.text;
  }
  return out;
}

/** Length without building the string: history is measured, never scanned. */
function lengthOf(content: ChatMessage['content']): number {
  if (typeof content === 'string') return content.length;
  if (!Array.isArray(content)) return 0;
  let n = 0;
  for (const part of content)
    if (part.type === 'text' && typeof part.text === 'string') n += part.text.length;
  return n;
}

function clip(text: string, head: number, tail: number): string {
  return text.length <= head + tail ? text : `${text.slice(0, head)}\n${text.slice(-tail)}`;
}

const SPACED_WORD = /[A-Za-z\u00C0-\u024F\u0370-\u03FF\u0400-\u04FF\uAC00-\uD7AF0-9]+/g;
const CJK_CHAR = /[\u3040-\u30FF\u3400-\u9FFF]/g;

export function countWords(text: string): number {
  const sample = text.length > WORD_SAMPLE ? text.slice(0, WORD_SAMPLE) : text;
  const spaced = sample.match(SPACED_WORD)?.length ?? 0;
  const cjk = sample.match(CJK_CHAR)?.length ?? 0;
  const words = spaced + cjk / 1.7;
  // Beyond the cap, extrapolate from the sample's density rather than scanning.
  return Math.round(text.length > sample.length ? (words * text.length) / sample.length : words);
}

/** Distinct lower-cased matches of a keyword group. */
function hits(re: RegExp, text: string): string[] {
  const found = text.match(re);
  if (!found) return [];
  return [...new Set(found.map((m) => m.toLowerCase().trim()))];
}

const LIST_ITEM = /^[ \t]*(?:[-*•]|\d{1,2}[.)])[ \t]+\S/gm;
const QUESTION = /[?？]/g;
const NUMBER = /(?<![\p{L}\p{N}.])[$€£]?\d[\d,.]*/gu;
const MATH_NOTATION =
  /\\(?:frac|int|sum|lim|sqrt|mathbb|begin|prod|infty|partial|cdot|leq|geq)|\$[^$\n]{2,}\$|[∫∑√∞≤≥≠ℝℕℤℚ∀∃∂∈]|(?<![\p{L}])[a-z]\^[\d{(a-z]|\bO\([^)]{1,12}\)/u;
// The `;`/`{` line-end test starts at the line start, not after the indent: behind `[ \t]*`
// every indent length retried `.*`, so a long line of spaces cost its length squared.
const CODE_LINE =
  /^(?:[ \t]*(?:def |class |function |const |let |var |import |from \S+ import |#include|public |private |fn |func |package |return |if \(|for \(|while \(|SELECT |INSERT |UPDATE |CREATE |\})|.*[;{]$)/gm;
// Line starts take spaces and tabs only: with \s a blank line's ^\s+ swallowed every newline
// after it and backtracked, so a run of n newlines cost n² (16k newlines: 0.4 s per request).
// The source location in parentheses holds no `(`: a frame matches when its last `(` opens
// the location, and `.*` after every `(` of a long line cost the line's length squared.
const STACK_FRAME = new RegExp(
  [
    String.raw`^[ \t]+at \S.*(?:\([^(\n\r\u2028\u2029]*:\d+(?::\d+)?\)|:\d+:\d+)[ \t\r]*$`,
    String.raw`^[ \t]*File ".+", line \d+`,
    String.raw`^#\d+\s+(?:0x[0-9a-f]+ in )?\S+`,
    String.raw`^goroutine \d+ \[`,
    String.raw`^[ \t]+/\S+\.\w+:\d+`,
    String.raw`^[ \t]*\d+: 0x[0-9a-f]+`,
    String.raw`^[ \t]*-->\s*\S+:\d+:\d+`,
    String.raw`^Caused by: `,
    String.raw`^Traceback \(most recent call last\)`,
    String.raw`^[ \t]+\w[\w.$<>]* \(\S+:\d+(?::\d+)?\)[ \t\r]*$`,
  ].join('|'),
  'gm',
);
const ERROR_LINE =
  /\b[A-Z]\w*(?:Error|Exception)\b|\berror(?:\[E\d+\])?:|\bFATAL\b|\bCRITICAL\b|\bpanic:|SIGSEGV|Segmentation fault|\bERROR\b|\bWARN(?:ING)?\b|deadlock detected|OOMKilled|Exit Code:\s*\d+/g;

export function countStackFrames(text: string): number {
  return text.match(STACK_FRAME)?.length ?? 0;
}

/** Lines that look like code outside fences. */
export function countCodeLines(text: string): number {
  return text.match(CODE_LINE)?.length ?? 0;
}

const FENCE = '```';
const NEWLINE = 10;

/**
 * Split fenced code from prose; keyword scans run on prose only. A fence opens at ``` followed
 * later by a newline and runs to the next ``` after that newline, or to the end of the text.
 * A scan by indexOf, not a regex: a backtracking ```[^\n]*\n retried from every ``` of a long
 * line without a newline, so a message of backticks cost its length squared.
 */
export function splitCode(text: string): { prose: string; blocks: number; codeLines: number } {
  let blocks = 0;
  let codeLines = 0;
  let prose = '';
  let from = 0;
  for (let open = text.indexOf(FENCE); open !== -1; open = text.indexOf(FENCE, from)) {
    const lineEnd = text.indexOf('\n', open + FENCE.length);
    // No newline after this ``` means none after any later one either: no more fences.
    if (lineEnd === -1) break;
    const close = text.indexOf(FENCE, lineEnd + 1);
    const end = close === -1 ? text.length : close + FENCE.length;
    blocks += 1;
    // Lines between the opening line and the closing fence.
    codeLines += newlinesIn(text, lineEnd + 1, end);
    prose += `${text.slice(from, open)}\n`;
    from = end;
  }
  return { prose: prose + text.slice(from), blocks, codeLines };
}

function newlinesIn(text: string, start: number, end: number): number {
  let n = 0;
  for (let i = start; i < end; i++) if (text.charCodeAt(i) === NEWLINE) n += 1;
  return n;
}

/**
 * The instruction of a turn: its first line, plus a short closing paragraph when a pasted
 * body sits between the two ("Here is the log: ... What is wrong?").
 */
function instructionOf(prose: string): string {
  const trimmed = prose.trim();
  const firstBreak = trimmed.indexOf('\n');
  if (firstBreak === -1) return trimmed;
  const first = trimmed.slice(0, firstBreak);
  const lastBreak = trimmed.lastIndexOf('\n\n');
  if (lastBreak <= firstBreak) return first;
  const last = trimmed.slice(lastBreak).trim();
  const bodyBetween = trimmed.slice(firstBreak, lastBreak).trim() !== '';
  return bodyBetween && last.length <= 300 ? `${first}\n${last}` : first;
}

/** Only a greeting or thanks, allowing a few words of small talk around it. */
function isGreeting(prose: string): boolean {
  return hits(GREETING, prose).length > 0 && countWords(prose.replace(GREETING, ' ')) <= 4;
}

/** Summaries win over edits: "summarise in bullet points" is a summary. */
function dataTaskOf(instruction: string): DifficultyFeatures['dataTask'] {
  if (hits(SUMMARIZE, instruction).length) return 'summarize';
  if (hits(TRIVIAL_TRANSFORM, instruction).length) return 'transform';
  if (hits(TRANSLATE, instruction).length) return 'translate';
  return null;
}

function enumerationsOf(prose: string): number {
  let n = 0;
  for (const sentence of prose.split(/[.!?。！？\n]/))
    if ((sentence.match(/[,，、]/g)?.length ?? 0) >= 3) n += 1;
  return n;
}

export function lastUserIndex(messages: ChatMessage[]): number {
  for (let i = messages.length - 1; i >= 0; i--) if (messages[i]?.role === 'user') return i;
  return messages.length - 1;
}

const HARD_CUES = [PROOF, DERIVE, DESIGN, ANALYSIS, SYSTEMS, ENGINEERING];

/** Hard-task cues in the two user turns before the last, each read only up to a cap. */
function contextSignalsOf(messages: ChatMessage[], last: number): string[] {
  const out = new Set<string>();
  let seen = 0;
  for (let i = last - 1; i >= 0 && seen < 2; i--) {
    const m = messages[i];
    if (m?.role !== 'user') continue;
    seen += 1;
    const text = textOf(m.content).slice(0, CONTEXT_CAP);
    for (const re of HARD_CUES) for (const h of hits(re, text)) out.add(h);
    if (countStackFrames(text) >= 2) out.add('stack trace');
  }
  return [...out];
}

/** Error or trace in the latest tool results: the agent is mid-way through debugging. */
function toolErrorsOf(messages: ChatMessage[]): boolean {
  let seen = 0;
  for (let i = messages.length - 1; i >= 0 && seen < 3; i--) {
    const m = messages[i];
    if (m?.role !== 'tool') continue;
    seen += 1;
    const text = textOf(m.content).slice(0, CONTEXT_CAP);
    if (countStackFrames(text) >= 1 || (text.match(ERROR_LINE)?.length ?? 0) >= 1) return true;
  }
  return false;
}

export function extractFeatures(req: ChatRequest): DifficultyFeatures {
  const messages = req.messages ?? [];
  const lastIdx = lastUserIndex(messages);
  const full = textOf(messages[lastIdx]?.content);
  const structural = full.length > STRUCTURE_CAP ? full.slice(0, STRUCTURE_CAP) : full;
  const { prose: fullProse, blocks, codeLines: fencedLines } = splitCode(structural);
  const prose = clip(fullProse, HEAD, TAIL);
  const words = countWords(full);

  const instruction = instructionOf(prose);
  const dataTask = dataTaskOf(instruction);
  // A pasted body is data: its length, code and lists say nothing about the difficulty.
  const bodyIsData = dataTask !== null;
  const scanned = bodyIsData ? instruction : prose;
  const instructionWords = bodyIsData ? Math.min(countWords(instruction), words) : words;

  const unfencedCode = countCodeLines(scanned);

  let toolMessages = 0;
  let userTurns = 0;
  let historyChars = 0;
  let previousAnswerChars = 0;
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i];
    if (!m) continue;
    if (m.role === 'tool') toolMessages += 1;
    if (m.role === 'user') userTurns += 1;
    if (i !== lastIdx && m.role !== 'system' && m.role !== 'developer') historyChars += lengthOf(m.content);
    if (i < lastIdx && m.role === 'assistant' && m.content) previousAnswerChars = lengthOf(m.content);
  }

  return {
    words,
    instructionWords,
    greeting: words <= 12 && isGreeting(prose),
    dataTask,
    pastedWords: words - instructionWords,
    lookup: LOOKUP.test(prose),
    brevity: hits(BREVITY, scanned).length > 0,
    task: hits(TASK, scanned),
    proof: hits(PROOF, scanned),
    derive: hits(DERIVE, scanned),
    analysis: hits(ANALYSIS, scanned),
    design: hits(DESIGN, scanned),
    systems: hits(SYSTEMS, scanned),
    engineering: hits(ENGINEERING, scanned),
    research: hits(RESEARCH, scanned),
    math: hits(MATH, scanned),
    mathNotation: MATH_NOTATION.test(bodyIsData ? instruction : structural),
    sequence: hits(SEQUENCE, scanned),
    constraints: hits(CONSTRAINT, scanned),
    listItems: bodyIsData ? 0 : (prose.match(LIST_ITEM)?.length ?? 0),
    enumerations: enumerationsOf(scanned),
    questions: scanned.match(QUESTION)?.length ?? 0,
    numbers: scanned.match(NUMBER)?.length ?? 0,
    codeBlocks: bodyIsData ? 0 : blocks + (unfencedCode >= 3 ? 1 : 0),
    codeLines: bodyIsData ? 0 : fencedLines + (unfencedCode >= 3 ? unfencedCode : 0),
    stackFrames: bodyIsData ? 0 : countStackFrames(structural),
    errorLines: bodyIsData ? 0 : (structural.match(ERROR_LINE)?.length ?? 0),
    tools: req.tools?.length ?? 0,
    toolMessages,
    toolErrors: toolMessages > 0 && toolErrorsOf(messages),
    userTurns,
    historyChars,
    previousAnswerChars,
    contextSignals: contextSignalsOf(messages, lastIdx),
  };
}
