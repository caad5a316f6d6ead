/**
 * The fake model: pure functions that decide what every wire format answers, so the
 * gateway's tests can compute expectations without running the server.
 */
import { randomBytes } from 'node:crypto';
import { fakeExtraction, isExtractionPrompt } from './extraction.ts';
import type { Conversation, Reply, ToolChoiceSpec, ToolSpec } from './types.ts';

/** Prompt tokens each image, document or file part adds. */
export const IMAGE_TOKENS = 85;

const ANSWER_TAIL = 'The quick brown fox jumps over the lazy dog.';

/** Whitespace runs become one space, ends trimmed: formats split text differently. */
export function normalizeText(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

/** The full answer to a conversation whose last user message says `lastUserText`. */
export function fakeAnswer(lastUserText: string): string {
  const head = Array.from(normalizeText(lastUserText)).slice(0, 60).join('').trimEnd();
  return `Fake answer to: ${head}. ${ANSWER_TAIL}`;
}

/** Tokens of a text the way the fake counts them: one per 4 characters, rounded up. */
export function countTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

export function promptTokens(chars: number, images: number): number {
  return Math.ceil(chars / 4) + images * IMAGE_TOKENS;
}

/**
 * Arguments satisfying a JSON schema's required properties: strings "fake" (or the first
 * enum value), numbers 1, booleans true, arrays [], objects {}. Optional ones are left out.
 */
export function fakeToolArguments(schema: unknown): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (!isRecord(schema)) return out;
  const props = isRecord(schema.properties) ? schema.properties : {};
  const required = Array.isArray(schema.required) ? schema.required : [];
  for (const name of required) {
    if (typeof name !== 'string') continue;
    out[name] = fakeValue(props[name]);
  }
  return out;
}

function fakeValue(prop: unknown): unknown {
  if (!isRecord(prop)) return 'fake';
  if (Array.isArray(prop.enum) && prop.enum.length > 0) return prop.enum[0];
  // Gemini writes types in upper case (STRING, NUMBER); JSON Schema allows a type list.
  const raw = Array.isArray(prop.type) ? prop.type[0] : prop.type;
  const type = typeof raw === 'string' ? raw.toLowerCase() : 'string';
  switch (type) {
    case 'number':
    case 'integer':
      return 1;
    case 'boolean':
      return true;
    case 'array':
      return [];
    case 'object':
      return fakeToolArguments(prop);
    default:
      return 'fake';
  }
}

function chooseTool(tools: ToolSpec[], choice: ToolChoiceSpec): ToolSpec | undefined {
  if (tools.length === 0 || choice === 'none') return undefined;
  if (typeof choice === 'object') return tools.find((t) => t.name === choice.name) ?? tools[0];
  return tools[0];
}

/** A request's output cap when it is a whole number of at least 1 (anything else: no cap). */
export function capOf(v: unknown): number | undefined {
  return typeof v === 'number' && Number.isInteger(v) && v >= 1 ? v : undefined;
}

/**
 * `text` stopped after `cap` tokens, as a model stops at its output cap: the longest prefix
 * `countTokens` puts at `cap` or fewer (4 characters a token), never splitting a surrogate pair.
 */
export function cutToCap(text: string, cap: number | undefined): { text: string; cut: boolean } {
  if (cap === undefined || countTokens(text) <= cap) return { text, cut: false };
  let end = cap * 4;
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end -= 1;
  return { text: text.slice(0, end), cut: true };
}

/** The top-level arguments whose JSON text ends within `json` (what a cut call's object keeps). */
function completeArgs(args: Record<string, unknown>, json: string): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(args)) {
    const next = { ...out, [k]: v };
    if (JSON.stringify(next).length - 1 > json.length) break; // without its closing brace
    out[k] = v;
  }
  return out;
}

/** What the fake model answers: one tool call, or text (the continuation after a prefill). */
export function plan(conv: Conversation): Reply {
  const prompt = promptTokens(conv.promptChars, conv.images);
  const tool = conv.lastIsToolResult ? undefined : chooseTool(conv.tools, conv.toolChoice);
  if (tool) {
    const full = fakeToolArguments(tool.schema);
    const { text: argsJson, cut } = cutToCap(JSON.stringify(full), conv.maxTokens);
    return {
      kind: 'tool',
      name: tool.name,
      args: cut ? completeArgs(full, argsJson) : full,
      argsJson,
      promptTokens: prompt,
      completionTokens: countTokens(argsJson),
      cut,
    };
  }
  const full =
    conv.jsonSchema !== undefined
      ? JSON.stringify(fakeToolArguments(conv.jsonSchema))
      : isExtractionPrompt(conv.lastUserText)
        ? fakeExtraction(conv.lastUserText)
        : fakeAnswer(conv.lastUserText);
  const rest =
    conv.prefill !== undefined && full.startsWith(conv.prefill) ? full.slice(conv.prefill.length) : full;
  // The cap counts generated tokens only: a prefill is the caller's, not the model's.
  const { text, cut } = cutToCap(rest, conv.maxTokens);
  return { kind: 'text', text, promptTokens: prompt, completionTokens: countTokens(text), cut };
}

/** Word-sized pieces whose concatenation is exactly `text` (whitespace rides with the next word). */
export function splitWords(text: string): string[] {
  return text.match(/\s*\S+|\s+$/g) ?? [];
}

/** Fixed-size pieces for tool-argument deltas. */
export function splitFixed(text: string, size = 6): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}

/** Provider-looking random ids (ids are not part of the deterministic contract). */
export function randomId(prefix: string, length = 24): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
  const bytes = randomBytes(length);
  let id = prefix;
  for (const b of bytes) id += alphabet[b % alphabet.length];
  return id;
}

export function nowSeconds(): number {
  return Math.floor(Date.now() / 1000);
}

export function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export function asArray(v: unknown): unknown[] {
  return Array.isArray(v) ? v : [];
}

export function asString(v: unknown): string | undefined {
  return typeof v === 'string' ? v : undefined;
}

/** Sum of the lengths of every string inside a JSON value (tool results given as objects). */
export function stringChars(v: unknown): number {
  if (typeof v === 'string') return v.length;
  if (Array.isArray(v)) return v.reduce((n: number, x) => n + stringChars(x), 0);
  if (isRecord(v)) return Object.values(v).reduce((n: number, x) => n + stringChars(x), 0);
  return 0;
}
