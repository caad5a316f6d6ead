/**
 * Literal unions as enums. TypeBox writes `Type.Union([Type.Literal('a'), ...])` as an
 * `anyOf` of `const` branches; the apiserver rejects that shape where a CRD needs it and
 * ajv reports it as one error per branch. Both consumers want a plain `enum` instead.
 */

/** A JSON Schema node seen as plain data (TypeBox's symbol keys are invisible here). */
export type JsonSchema = { readonly [key: string]: unknown };

type Scalar = string | number | boolean;

export const isRecord = (value: unknown): value is JsonSchema =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const isScalar = (value: unknown): value is Scalar =>
  typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean';

/** Keywords a literal branch may carry besides `const` without changing its meaning. */
const LITERAL_KEYS = new Set(['const', 'type', 'description']);

function literalOf(node: JsonSchema): Scalar | undefined {
  if (!isScalar(node.const)) return undefined;
  return Object.keys(node).every((key) => LITERAL_KEYS.has(key)) ? node.const : undefined;
}

/**
 * The allowed values when `node` is a single literal or a union of literals of one JSON
 * type, with that type; `undefined` for any other schema.
 */
export function literalEnum(node: JsonSchema): { type: string; values: Scalar[] } | undefined {
  const single = literalOf(node);
  if (single !== undefined) return { type: typeof single, values: [single] };
  if (!Array.isArray(node.anyOf) || node.anyOf.length === 0) return undefined;
  const values: Scalar[] = [];
  for (const branch of node.anyOf) {
    const value = isRecord(branch) ? literalOf(branch) : undefined;
    if (value === undefined) return undefined;
    values.push(value);
  }
  const type = typeof values[0];
  return values.every((v) => typeof v === type) ? { type, values } : undefined;
}

/** Keywords of a union node that still apply after it became an enum. */
const CARRIED_KEYS = ['description', 'default', 'title'] as const;

/**
 * A deep copy of `schema` with every literal union rewritten to `{type, enum}`; all other
 * keywords are kept as they are. Used for ajv, which understands everything else.
 */
export function withLiteralEnums(schema: JsonSchema): JsonSchema {
  const literals = literalEnum(schema);
  if (literals) {
    const out: Record<string, unknown> = { type: literals.type, enum: literals.values };
    for (const key of CARRIED_KEYS) if (schema[key] !== undefined) out[key] = schema[key];
    return out;
  }
  const out: Record<string, unknown> = { ...schema };
  for (const key of ['properties', 'patternProperties']) {
    const map = schema[key];
    if (isRecord(map)) {
      out[key] = Object.fromEntries(
        Object.entries(map).map(([name, sub]) => [name, isRecord(sub) ? withLiteralEnums(sub) : sub]),
      );
    }
  }
  for (const key of ['items', 'additionalProperties', 'not']) {
    const sub = schema[key];
    if (isRecord(sub)) out[key] = withLiteralEnums(sub);
  }
  for (const key of ['anyOf', 'allOf', 'oneOf']) {
    const list = schema[key];
    if (Array.isArray(list))
      out[key] = list.map((sub: unknown) => (isRecord(sub) ? withLiteralEnums(sub) : sub));
  }
  return out;
}
