/**
 * ajv validators for the five kinds, compiled from the same TypeBox schemas the CRDs are
 * rendered from, so a standalone gantry.yaml is held to the rules the apiserver applies
 * (plus `additionalProperties: false`, which the apiserver can only prune).
 */
import type { Static } from '@sinclair/typebox';
import { Ajv, type ErrorObject, type SchemaObject, type ValidateFunction } from 'ajv';
import { withLiteralEnums, type JsonSchema } from './literals.ts';
import { Kinds, type KindName } from './schemas.ts';

export type Validators = {
  readonly [K in KindName]: ValidateFunction<Static<(typeof Kinds)[K]>>;
};

/**
 * One validator per kind. They fill in schema defaults on the object they check
 * (`useDefaults`) and report every problem at once (`allErrors`). Compile once and reuse:
 * compiling is the expensive part.
 */
export function compileValidators(): Validators {
  const ajv = new Ajv({ useDefaults: true, allErrors: true, strict: true });
  // Enums instead of TypeBox's anyOf-of-const give one error naming the allowed values.
  const compile = <K extends KindName>(kind: K) =>
    ajv.compile<Static<(typeof Kinds)[K]>>(withLiteralEnums(Kinds[kind] as JsonSchema) as SchemaObject);
  return {
    ModelDeployment: compile('ModelDeployment'),
    Tenant: compile('Tenant'),
    ApiKey: compile('ApiKey'),
    GuardrailPolicy: compile('GuardrailPolicy'),
    CachePolicy: compile('CachePolicy'),
  };
}

let shared: Validators | undefined;

/**
 * The process's one set of validators, compiled on first use. A compile allocates about
 * 18 MB and keeps its generated code, so modules that only check documents share this set
 * instead of each compiling their own at import time. Validators are synchronous: read a
 * validator's `errors` right after calling it, before another document is checked.
 */
export function sharedValidators(): Validators {
  return (shared ??= compileValidators());
}

const show = (value: unknown) => (typeof value === 'string' ? value : JSON.stringify(value));

function formatOne(error: ErrorObject): string {
  const at = error.instancePath || '/';
  const params: Record<string, unknown> = error.params;
  switch (error.keyword) {
    case 'required':
      return `${error.instancePath}/${show(params.missingProperty)}: is required`;
    case 'additionalProperties':
      return `${at}: unknown property "${show(params.additionalProperty)}"`;
    case 'enum': {
      const allowed = Array.isArray(params.allowedValues) ? params.allowedValues : [];
      // A single allowed value is a TypeBox literal (apiVersion, kind): say it like `const`.
      if (allowed.length === 1) return `${at}: must be ${JSON.stringify(allowed[0])}`;
      return `${at}: must be one of: ${allowed.map(show).join(', ')}`;
    }
    case 'const':
      return `${at}: must be ${JSON.stringify(params.allowedValue)}`;
    default:
      return `${at}: ${error.message ?? `fails ${error.keyword}`}`;
  }
}

/**
 * ajv errors as lines of the form `/spec/weight: must be >= 0`, one per distinct problem,
 * in ajv's order (which follows the schema).
 */
export function formatAjvErrors(errors: readonly ErrorObject[] | null | undefined): string[] {
  return [...new Set((errors ?? []).map(formatOne))];
}
