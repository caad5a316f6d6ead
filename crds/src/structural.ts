/**
 * A check, independent of the converter, that an `openAPIV3Schema` follows the
 * apiextensions.k8s.io/v1 structural-schema rules the apiserver enforces. generate.ts
 * refuses to write a CRD with problems and the tests assert there are none.
 */
import { isRecord, type JsonSchema } from './literals.ts';

/** The JSONSchemaProps fields a CRD schema may carry; anything else is rejected or lost. */
const ALLOWED = new Set([
  'description',
  'title',
  'type',
  'format',
  'enum',
  'default',
  'example',
  'nullable',
  'minimum',
  'exclusiveMinimum',
  'maximum',
  'exclusiveMaximum',
  'multipleOf',
  'minLength',
  'maxLength',
  'pattern',
  'minItems',
  'maxItems',
  'minProperties',
  'maxProperties',
  'required',
  'properties',
  'items',
  'additionalProperties',
  'x-kubernetes-preserve-unknown-fields',
  'x-kubernetes-list-type',
  'x-kubernetes-list-map-keys',
  'x-kubernetes-map-type',
  'x-kubernetes-int-or-string',
  'x-kubernetes-validations',
]);

const TYPES = new Set(['object', 'array', 'string', 'number', 'integer', 'boolean']);
const SCALARS = new Set(['string', 'number', 'integer', 'boolean']);
const ROOT_META = ['apiVersion', 'kind', 'metadata'];

function checkNode(node: JsonSchema, path: string, problems: string[]): void {
  const at = path || '<root>';
  for (const key of Object.keys(node)) {
    if (!ALLOWED.has(key)) problems.push(`${at}: keyword "${key}" is not allowed in a CRD schema`);
  }
  const type = node.type;
  const preserve = node['x-kubernetes-preserve-unknown-fields'];
  if (preserve !== undefined && preserve !== true) {
    problems.push(`${at}: x-kubernetes-preserve-unknown-fields must be true or absent`);
  }
  if (type === undefined && preserve !== true && node['x-kubernetes-int-or-string'] !== true) {
    problems.push(`${at}: type is missing`);
  } else if (type !== undefined && (typeof type !== 'string' || !TYPES.has(type))) {
    problems.push(`${at}: type ${JSON.stringify(type)} is not an OpenAPI v3 type`);
  }
  for (const bound of ['exclusiveMinimum', 'exclusiveMaximum']) {
    if (node[bound] !== undefined && typeof node[bound] !== 'boolean') {
      problems.push(`${at}: ${bound} must be a boolean in OpenAPI v3.0`);
    }
  }

  const props = node.properties;
  if (props !== undefined) {
    if (!isRecord(props)) problems.push(`${at}: properties must be a map`);
    else {
      if (type !== 'object') problems.push(`${at}: properties on a non-object`);
      for (const [name, sub] of Object.entries(props)) {
        if (isRecord(sub)) checkNode(sub, path ? `${path}.${name}` : name, problems);
        else problems.push(`${at}.${name}: a schema must be an object`);
      }
    }
  }
  if (Array.isArray(node.required)) {
    for (const name of node.required) {
      if (!isRecord(props) || typeof name !== 'string' || !(name in props)) {
        problems.push(`${at}: required property ${JSON.stringify(name)} is not declared`);
      }
    }
  }

  const extra = node.additionalProperties;
  if (extra !== undefined) {
    if (!isRecord(extra)) problems.push(`${at}: additionalProperties must be a schema, never a boolean`);
    else {
      if (isRecord(props) && Object.keys(props).length > 0) {
        problems.push(`${at}: additionalProperties and properties are mutually exclusive`);
      }
      checkNode(extra, `${path}.*`, problems);
    }
  }

  if (type === 'array') {
    if (!isRecord(node.items)) problems.push(`${at}: an array needs a single items schema`);
    else checkNode(node.items, `${path}[]`, problems);
  } else if (node.items !== undefined) {
    problems.push(`${at}: items on a non-array`);
  }
  const listType = node['x-kubernetes-list-type'];
  if (listType !== undefined) {
    if (type !== 'array') problems.push(`${at}: x-kubernetes-list-type on a non-array`);
    const itemType = isRecord(node.items) ? node.items.type : undefined;
    if (listType === 'set' && (typeof itemType !== 'string' || !SCALARS.has(itemType))) {
      problems.push(`${at}: a set list needs scalar items`);
    }
  }
}

/** Every rule the schema breaks, as readable lines; empty when it is structural. */
export function structuralProblems(schema: unknown): string[] {
  if (!isRecord(schema)) return ['<root>: the schema must be an object'];
  const problems: string[] = [];
  if (schema.type !== 'object') problems.push('<root>: type must be object');
  if (schema.additionalProperties !== undefined) problems.push('<root>: additionalProperties is not allowed');
  checkNode(schema, '', problems);

  const props = isRecord(schema.properties) ? schema.properties : {};
  for (const name of ROOT_META) {
    const sub = props[name];
    if (!isRecord(sub)) continue;
    if (sub.default !== undefined) problems.push(`${name}: a default is not allowed here`);
    if (name === 'metadata') {
      // Only name/generateName may be restricted; the apiserver owns the rest.
      const extraKeys = Object.keys(sub).filter((key) => key !== 'type' && key !== 'description');
      if (sub.type !== 'object' || extraKeys.length > 0) {
        problems.push('metadata: must be just {type: object}; the apiserver owns it');
      }
    } else if (sub.type !== 'string') {
      problems.push(`${name}: type must be string`);
    }
  }
  return problems;
}
