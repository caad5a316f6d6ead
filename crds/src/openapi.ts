/**
 * TypeBox schema → CRD `openAPIV3Schema`. The apiserver accepts only structural schemas
 * (apiextensions.k8s.io/v1): every field typed, no `$ref`/`$id`/`$schema`, no `const`,
 * no `uniqueItems`, no `patternProperties`, `additionalProperties` never `false` and
 * never beside `properties`. Rather than silently emitting something the apiserver would
 * reject, a construct with no structural equivalent throws, naming the field.
 */
import type { TSchema } from '@sinclair/typebox';
import { isRecord, literalEnum, type JsonSchema } from './literals.ts';

export type OpenApiType = 'object' | 'array' | 'string' | 'number' | 'integer' | 'boolean';
const OPENAPI_TYPES: ReadonlySet<string> = new Set<OpenApiType>([
  'object',
  'array',
  'string',
  'number',
  'integer',
  'boolean',
]);

export interface OpenApiSchema {
  description?: string;
  type?: OpenApiType;
  format?: string;
  enum?: (string | number | boolean)[];
  default?: unknown;
  minimum?: number;
  exclusiveMinimum?: boolean;
  maximum?: number;
  exclusiveMaximum?: boolean;
  multipleOf?: number;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  minItems?: number;
  maxItems?: number;
  minProperties?: number;
  maxProperties?: number;
  required?: string[];
  properties?: Record<string, OpenApiSchema>;
  items?: OpenApiSchema;
  additionalProperties?: OpenApiSchema;
  'x-kubernetes-list-type'?: 'set';
  'x-kubernetes-preserve-unknown-fields'?: true;
}

/** Keywords copied unchanged when present. */
const PASSTHROUGH = [
  'format',
  'minimum',
  'maximum',
  'multipleOf',
  'minLength',
  'maxLength',
  'pattern',
  'minItems',
  'maxItems',
  'minProperties',
  'maxProperties',
] as const;

/** Keywords that have no meaning for the apiserver and are dropped. */
const DROPPED = new Set(['$id', '$schema', 'title', 'examples']);

const HANDLED = new Set([
  ...PASSTHROUGH,
  ...DROPPED,
  'description',
  'type',
  'default',
  'enum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'required',
  'properties',
  'patternProperties',
  'additionalProperties',
  'items',
  'uniqueItems',
]);

/** TypeBox's `Type.Record(Type.String(), X)` key pattern, and the plain catch-all. */
const CATCH_ALL_PATTERNS = new Set(['^(.*)$', '^.*$', '.*']);

/**
 * The apiserver owns `apiVersion`, `kind` and `metadata` of every object; a CRD may only
 * type them (and restrict the name), so they are replaced at the root.
 */
const ROOT_META: Record<string, OpenApiSchema> = {
  apiVersion: { description: 'API group and version of this object.', type: 'string' },
  kind: { description: 'Kind of this object.', type: 'string' },
  metadata: { type: 'object' },
};

class UnsupportedSchemaError extends Error {
  constructor(path: string, what: string) {
    super(`${path || '<root>'}: ${what} has no structural CRD equivalent`);
    this.name = 'UnsupportedSchemaError';
  }
}

const fieldPath = (parent: string, name: string) => (parent ? `${parent}.${name}` : name);

function convertObject(node: JsonSchema, path: string, isRoot: boolean, out: OpenApiSchema): void {
  const props = isRecord(node.properties) ? node.properties : {};
  const names = Object.keys(props);
  if (names.length > 0) {
    out.properties = {};
    for (const name of names) {
      const sub = props[name];
      if (!isRecord(sub)) throw new UnsupportedSchemaError(fieldPath(path, name), 'a boolean schema');
      const meta = isRoot ? ROOT_META[name] : undefined;
      out.properties[name] = meta ? { ...meta } : convertNode(sub, fieldPath(path, name), false);
    }
  }
  if (Array.isArray(node.required)) {
    const required = node.required.filter(
      (name): name is string => typeof name === 'string' && !(isRoot && name in ROOT_META),
    );
    if (required.length > 0) out.required = required;
  }

  let values: JsonSchema | boolean | undefined;
  if (node.patternProperties !== undefined) {
    const patterns = isRecord(node.patternProperties) ? Object.entries(node.patternProperties) : [];
    const only = patterns.length === 1 ? patterns[0] : undefined;
    if (!only || !CATCH_ALL_PATTERNS.has(only[0]) || !isRecord(only[1])) {
      throw new UnsupportedSchemaError(path, 'patternProperties other than one catch-all pattern');
    }
    values = only[1];
  }
  const extra = node.additionalProperties;
  if (isRecord(extra)) values = extra;
  else if (extra === true && values === undefined) values = true;

  if (isRecord(values)) {
    if (names.length > 0) throw new UnsupportedSchemaError(path, 'additionalProperties beside properties');
    if (isRoot) throw new UnsupportedSchemaError(path, 'additionalProperties at the root');
    out.additionalProperties = convertNode(values, fieldPath(path, '*'), false);
  } else if (values === true || (extra === undefined && names.length === 0)) {
    // A free-form object: keep what the user wrote instead of pruning it all away.
    out['x-kubernetes-preserve-unknown-fields'] = true;
  }
  // `additionalProperties: false` is dropped on purpose: the apiserver prunes unknown
  // fields, and `kubectl apply` (strict field validation) reports them as errors.
}

function convertArray(node: JsonSchema, path: string, out: OpenApiSchema): void {
  if (!isRecord(node.items)) throw new UnsupportedSchemaError(path, 'an array without one items schema');
  out.items = convertNode(node.items, fieldPath(path, '[]'), false);
  if (node.uniqueItems === true) {
    // uniqueItems is forbidden (quadratic); a `set` list means the same for scalars.
    const itemType = out.items.type;
    if (itemType === 'object' || itemType === 'array' || itemType === undefined) {
      throw new UnsupportedSchemaError(path, 'uniqueItems on non-scalar items');
    }
    out['x-kubernetes-list-type'] = 'set';
  }
}

function convertNode(node: JsonSchema, path: string, isRoot: boolean): OpenApiSchema {
  const literals = literalEnum(node);
  if (literals) {
    if (!OPENAPI_TYPES.has(literals.type)) throw new UnsupportedSchemaError(path, 'a literal of this type');
    const out: OpenApiSchema = {};
    if (typeof node.description === 'string') out.description = node.description;
    out.type = literals.type as OpenApiType;
    out.enum = literals.values;
    if (node.default !== undefined) out.default = node.default;
    return out;
  }
  for (const key of Object.keys(node)) {
    if (!HANDLED.has(key)) throw new UnsupportedSchemaError(path, `keyword "${key}"`);
  }

  const out: OpenApiSchema = {};
  if (typeof node.description === 'string') out.description = node.description;
  if (node.type === undefined) {
    // Type.Unknown()/Type.Any(): anything goes, so the apiserver must keep it verbatim.
    if (Object.keys(node).some((key) => key !== 'description')) {
      throw new UnsupportedSchemaError(path, 'an untyped schema with constraints');
    }
    out['x-kubernetes-preserve-unknown-fields'] = true;
    return out;
  }
  if (typeof node.type !== 'string' || !OPENAPI_TYPES.has(node.type)) {
    throw new UnsupportedSchemaError(path, `type ${JSON.stringify(node.type)}`);
  }
  out.type = node.type as OpenApiType;
  if (Array.isArray(node.enum)) out.enum = [...(node.enum as (string | number | boolean)[])];
  if (node.default !== undefined) out.default = node.default;
  for (const key of PASSTHROUGH) {
    const value = node[key];
    if (value !== undefined) (out as Record<string, unknown>)[key] = value;
  }
  // Draft 2019 writes exclusive bounds as numbers; OpenAPI v3.0 wants a bound plus a flag.
  if (typeof node.exclusiveMinimum === 'number') {
    out.minimum = node.exclusiveMinimum;
    out.exclusiveMinimum = true;
  }
  if (typeof node.exclusiveMaximum === 'number') {
    out.maximum = node.exclusiveMaximum;
    out.exclusiveMaximum = true;
  }

  if (out.type === 'object') convertObject(node, path, isRoot, out);
  else if (out.type === 'array') convertArray(node, path, out);
  return out;
}

/**
 * The structural `openAPIV3Schema` for a TypeBox manifest schema. Pure: the input is not
 * modified and equal inputs give deep-equal outputs in the same key order.
 */
export function toOpenApiV3(schema: TSchema): OpenApiSchema {
  const root = convertNode(schema as JsonSchema, '', true);
  if (root.type !== 'object') throw new UnsupportedSchemaError('', 'a root that is not an object');
  return root;
}
