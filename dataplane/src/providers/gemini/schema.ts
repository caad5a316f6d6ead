/**
 * JSON Schema → Gemini Schema. Gemini accepts only an OpenAPI 3.0 subset and answers 400 on
 * any unknown keyword, so function `parameters` and `response_format.json_schema.schema` are
 * rebuilt from an allowlist rather than passed through.
 *
 * Rewritten (meaning kept):
 * - `$ref` to `#/$defs/*` or `#/definitions/*` is inlined (a cycle becomes a bare OBJECT);
 * - `type: [T, "null"]`, `anyOf/oneOf` with a `{type: "null"}` member, `null` in `enum`
 *   → `nullable: true`; several non-null types → `anyOf`;
 * - `oneOf` → `anyOf`; `allOf` → its members merged; `const` → a one-value `enum`;
 * - `exclusiveMinimum`/`exclusiveMaximum` → `minimum`/`maximum`; `examples[0]` → `example`;
 * - non-string `enum` values (Gemini allows only STRING enums) → listed in `description`;
 * - `type` names upper-cased; `required` limited to declared properties.
 * Dropped: everything else, notably `$schema`, `$id`, `$defs`, `definitions`,
 * `additionalProperties`, `strict`, `patternProperties`, `unevaluatedProperties`, `not`,
 * `if`/`then`/`else`, `dependentRequired`, `uniqueItems`, `multipleOf`, `contentEncoding`,
 * `readOnly`/`writeOnly`, `deprecated`, and string `format`s other than `enum`/`date-time`.
 */
import { invalidParam } from '../../errors.ts';
import { isRecord } from '../shared/retry-after.ts';
import type { GeminiSchema } from './wire.ts';

/** Keywords copied as they are (after their children are converted). */
const PLAIN_KEYS = [
  'title',
  'description',
  'nullable',
  'pattern',
  'minLength',
  'maxLength',
  'minItems',
  'maxItems',
  'minProperties',
  'maxProperties',
  'minimum',
  'maximum',
  'default',
  'example',
  'propertyOrdering',
] as const;

/** Every keyword this converter may emit; anything else in the input is dropped. */
export const GEMINI_SCHEMA_KEYS: readonly string[] = [
  ...PLAIN_KEYS,
  'type',
  'format',
  'enum',
  'properties',
  'required',
  'items',
  'anyOf',
];

/** Input keywords that are consumed by a rewrite and therefore not reported as dropped. */
const REWRITTEN_KEYS = new Set([
  '$ref',
  'oneOf',
  'allOf',
  'const',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'examples',
]);

const TYPE_NAMES: Record<string, string> = {
  string: 'STRING',
  number: 'NUMBER',
  integer: 'INTEGER',
  boolean: 'BOOLEAN',
  array: 'ARRAY',
  object: 'OBJECT',
};

/** Gemini (Developer API) rejects other string formats outright. */
const FORMATS: Record<string, readonly string[]> = {
  STRING: ['enum', 'date-time'],
  NUMBER: ['float', 'double'],
  INTEGER: ['int32', 'int64'],
};

/**
 * Inlining `$ref`s can make a small schema deep or huge (a chain of definitions, or each one
 * referring to the next twice): the rebuilt schema is bounded in depth, so the conversion
 * and serialising it cannot overflow the stack, and in size, so it cannot take the CPU.
 */
export const MAX_SCHEMA_LEVELS = 500;
export const MAX_SCHEMA_NODES = 20_000;

interface Ctx {
  root: Record<string, unknown>;
  dropped: Set<string>;
  /** The request field the schema came from, for refusals. */
  param: string;
  nodes: number;
}

export interface CleanedSchema {
  schema: GeminiSchema;
  /** Input keywords with no Gemini equivalent that were removed, sorted. */
  dropped: string[];
}

export function cleanSchema(input: unknown, param = 'schema'): CleanedSchema {
  const root = isRecord(input) ? input : {};
  const ctx: Ctx = { root, dropped: new Set(), param, nodes: 0 };
  const schema = convert(root, ctx, [], 1);
  return { schema, dropped: [...ctx.dropped].sort() };
}

export const toGeminiSchema = (input: unknown, param?: string): GeminiSchema =>
  cleanSchema(input, param).schema;

function resolveRef(ref: string, ctx: Ctx): Record<string, unknown> | undefined {
  const m = /^#\/(\$defs|definitions)\/(.+)$/.exec(ref);
  if (!m) return undefined;
  const defs = ctx.root[m[1] as string];
  const name = (m[2] as string).replace(/~1/g, '/').replace(/~0/g, '~');
  const found = isRecord(defs) ? defs[name] : undefined;
  return isRecord(found) ? found : undefined;
}

/** One more node of the rebuilt schema, `level` deep (a `$ref` followed or an `allOf` member counts). */
function spend(ctx: Ctx, level: number): void {
  if (level > MAX_SCHEMA_LEVELS)
    throw invalidParam(
      ctx.param,
      `schema nests deeper than ${MAX_SCHEMA_LEVELS} levels once $refs are inlined`,
    );
  if (++ctx.nodes > MAX_SCHEMA_NODES)
    throw invalidParam(ctx.param, `schema grows beyond ${MAX_SCHEMA_NODES} nodes once $refs are inlined`);
}

/** Fold `$ref` and `allOf` into one flat node before conversion. */
function flatten(
  node: Record<string, unknown>,
  ctx: Ctx,
  refs: string[],
  level: number,
): [Record<string, unknown>, string[]] {
  let out = node;
  let seen = refs;
  while (typeof out.$ref === 'string') {
    // A chain of references is as deep as its length, however flat each definition is.
    spend(ctx, level + seen.length);
    const ref = out.$ref;
    const { $ref: _ref, ...siblings } = out;
    const target = seen.includes(ref) ? undefined : resolveRef(ref, ctx);
    // A recursive or external reference cannot be inlined: keep only its shape's kind.
    if (!target) return [{ type: 'object', ...siblings }, seen];
    seen = [...seen, ref];
    out = { ...target, ...siblings };
  }
  if (Array.isArray(out.allOf)) {
    const { allOf, ...rest } = out;
    const merged: Record<string, unknown> = {};
    const properties: Record<string, unknown> = {};
    const required: unknown[] = [];
    for (const member of allOf) {
      if (!isRecord(member)) continue;
      spend(ctx, level + 1);
      const [flat] = flatten(member, ctx, seen, level + 1);
      if (isRecord(flat.properties)) Object.assign(properties, flat.properties);
      if (Array.isArray(flat.required)) required.push(...(flat.required as unknown[]));
      for (const [k, v] of Object.entries(flat)) if (!(k in merged)) merged[k] = v;
    }
    if (isRecord(rest.properties)) Object.assign(properties, rest.properties);
    if (Array.isArray(rest.required)) required.push(...(rest.required as unknown[]));
    out = { ...merged, ...rest };
    if (Object.keys(properties).length > 0) out.properties = properties;
    if (required.length > 0) out.required = [...new Set(required)];
  }
  return [out, seen];
}

function convert(input: Record<string, unknown>, ctx: Ctx, refs: string[], level: number): GeminiSchema {
  spend(ctx, level);
  const [node, seen] = flatten(input, ctx, refs, level);
  const out: GeminiSchema = {};
  for (const key of Object.keys(node)) {
    if (!GEMINI_SCHEMA_KEYS.includes(key) && !REWRITTEN_KEYS.has(key) && key !== 'type') ctx.dropped.add(key);
  }
  for (const key of PLAIN_KEYS) if (node[key] !== undefined) out[key] = node[key];
  if (node.example === undefined && Array.isArray(node.examples) && node.examples.length > 0) {
    out.example = node.examples[0];
  }
  if (typeof node.exclusiveMinimum === 'number' && out.minimum === undefined)
    out.minimum = node.exclusiveMinimum;
  if (typeof node.exclusiveMaximum === 'number' && out.maximum === undefined)
    out.maximum = node.exclusiveMaximum;

  applyType(node, out);
  applyEnum(node, out);

  if (isRecord(node.properties)) {
    const properties: Record<string, GeminiSchema> = {};
    for (const [name, sub] of Object.entries(node.properties)) {
      properties[name] = convert(isRecord(sub) ? sub : {}, ctx, seen, level + 1);
    }
    out.properties = properties;
    if (Array.isArray(node.required)) {
      const required = node.required.filter((r): r is string => typeof r === 'string' && r in properties);
      if (required.length > 0) out.required = required;
    }
    out.type ??= 'OBJECT';
  }
  const items = Array.isArray(node.items) ? node.items[0] : node.items;
  if (isRecord(items)) {
    out.items = convert(items, ctx, seen, level + 1);
    out.type ??= 'ARRAY';
  }

  const alternatives = Array.isArray(node.anyOf)
    ? node.anyOf
    : Array.isArray(node.oneOf)
      ? node.oneOf
      : undefined;
  if (alternatives) applyAlternatives(alternatives, out, ctx, seen, level + 1);

  if (typeof node.format === 'string' && typeof out.type === 'string') {
    if (FORMATS[out.type]?.includes(node.format)) out.format = node.format;
    else ctx.dropped.add('format');
  }
  return out;
}

function applyType(node: Record<string, unknown>, out: GeminiSchema): void {
  const types = (Array.isArray(node.type) ? node.type : [node.type]).filter(
    (t): t is string => typeof t === 'string',
  );
  if (types.includes('null')) out.nullable = true;
  const named = types.map((t) => TYPE_NAMES[t]).filter((t): t is string => t !== undefined);
  if (named.length === 1) out.type = named[0];
  else if (named.length > 1) out.anyOf = named.map((type) => ({ type }));
}

function applyEnum(node: Record<string, unknown>, out: GeminiSchema): void {
  const values = Array.isArray(node.enum) ? node.enum : 'const' in node ? [node.const] : undefined;
  if (!values) return;
  if (values.includes(null)) out.nullable = true;
  const rest = values.filter((v) => v !== null);
  if (rest.length === 0) return;
  if (rest.every((v): v is string => typeof v === 'string')) {
    out.enum = rest;
    out.type ??= 'STRING';
    return;
  }
  const allowed = `Allowed values: ${rest.map((v) => JSON.stringify(v)).join(', ')}.`;
  out.description = typeof out.description === 'string' ? `${out.description} ${allowed}` : allowed;
}

function applyAlternatives(
  alternatives: unknown[],
  out: GeminiSchema,
  ctx: Ctx,
  refs: string[],
  level: number,
): void {
  const members: GeminiSchema[] = [];
  for (const alt of alternatives) {
    if (!isRecord(alt)) continue;
    if (alt.type === 'null') {
      out.nullable = true;
      continue;
    }
    members.push(convert(alt, ctx, refs, level));
  }
  if (members.length === 1) {
    // `anyOf: [X, null]` is the usual spelling of an optional X: inline X.
    for (const [k, v] of Object.entries(members[0] as GeminiSchema)) if (!(k in out)) out[k] = v;
  } else if (members.length > 1) {
    out.anyOf = members;
  }
}
