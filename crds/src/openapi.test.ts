import { Type } from '@sinclair/typebox';
import { describe, expect, it } from 'vitest';
import { toOpenApiV3 } from './openapi.ts';
import { structuralProblems } from './structural.ts';

const manifest = (spec: ReturnType<typeof Type.Object>) =>
  Type.Object(
    {
      apiVersion: Type.Literal('gantry.dev/v1alpha1'),
      kind: Type.Literal('Thing'),
      metadata: Type.Object({ name: Type.String({ pattern: '^[a-z]+$' }) }, { additionalProperties: true }),
      spec,
    },
    { $id: 'Thing' },
  );

describe('toOpenApiV3', () => {
  it('types apiVersion and kind as strings, leaves metadata to the apiserver and drops $id', () => {
    const out = toOpenApiV3(manifest(Type.Object({})));
    expect(out.properties?.apiVersion?.type).toBe('string');
    expect(out.properties?.apiVersion?.enum).toBeUndefined();
    expect(out.properties?.kind?.type).toBe('string');
    expect(out.properties?.metadata).toEqual({ type: 'object' });
    expect(out.required).toEqual(['spec']);
    expect(JSON.stringify(out)).not.toContain('$id');
  });

  it('turns literal unions into enums and keeps their default', () => {
    const spec = Type.Object({
      mode: Type.Union([Type.Literal('a'), Type.Literal('b')], { default: 'a', description: 'the mode' }),
    });
    expect(toOpenApiV3(manifest(spec)).properties?.spec?.properties?.mode).toEqual({
      description: 'the mode',
      type: 'string',
      enum: ['a', 'b'],
      default: 'a',
    });
  });

  it('turns records into additionalProperties and unique scalar arrays into sets', () => {
    const spec = Type.Object(
      {
        shares: Type.Record(Type.String(), Type.Number({ minimum: 0 })),
        tags: Type.Array(Type.String(), { uniqueItems: true }),
      },
      { additionalProperties: false },
    );
    const props = toOpenApiV3(manifest(spec)).properties?.spec;
    expect(props?.additionalProperties).toBeUndefined();
    expect(props?.properties?.shares).toEqual({
      type: 'object',
      additionalProperties: { type: 'number', minimum: 0 },
    });
    expect(props?.properties?.tags).toEqual({
      type: 'array',
      items: { type: 'string' },
      'x-kubernetes-list-type': 'set',
    });
  });

  it('keeps free-form values instead of pruning them', () => {
    const spec = Type.Object({ extra: Type.Unknown(), bag: Type.Object({}, { additionalProperties: true }) });
    const props = toOpenApiV3(manifest(spec)).properties?.spec?.properties;
    expect(props?.extra).toEqual({ 'x-kubernetes-preserve-unknown-fields': true });
    expect(props?.bag).toEqual({ type: 'object', 'x-kubernetes-preserve-unknown-fields': true });
  });

  it('writes numeric exclusive bounds the OpenAPI v3.0 way', () => {
    const spec = Type.Object({ ratio: Type.Number({ exclusiveMinimum: 0, exclusiveMaximum: 1 }) });
    expect(toOpenApiV3(manifest(spec)).properties?.spec?.properties?.ratio).toEqual({
      type: 'number',
      minimum: 0,
      exclusiveMinimum: true,
      maximum: 1,
      exclusiveMaximum: true,
    });
  });

  it('throws, naming the field, on what a structural schema cannot say', () => {
    const union = Type.Object({ x: Type.Union([Type.String(), Type.Number()]) });
    expect(() => toOpenApiV3(manifest(union))).toThrow(/spec\.x: keyword "anyOf"/);
    const nullable = Type.Object({ y: Type.Null() });
    expect(() => toOpenApiV3(manifest(nullable))).toThrow(/spec\.y: type "null"/);
    const objectSet = Type.Object({
      z: Type.Array(Type.Object({ a: Type.String() }), { uniqueItems: true }),
    });
    expect(() => toOpenApiV3(manifest(objectSet))).toThrow(/spec\.z: uniqueItems/);
  });

  it('does not modify its input', () => {
    const schema = manifest(Type.Object({ mode: Type.Union([Type.Literal('a'), Type.Literal('b')]) }));
    const before = JSON.stringify(schema);
    toOpenApiV3(schema);
    expect(JSON.stringify(schema)).toBe(before);
  });
});

describe('structuralProblems', () => {
  it('accepts a converted schema', () => {
    expect(structuralProblems(toOpenApiV3(manifest(Type.Object({ a: Type.String() }))))).toEqual([]);
  });

  it('reports what the apiserver would reject', () => {
    const problems = structuralProblems({
      type: 'object',
      properties: {
        metadata: { type: 'object', properties: { name: { type: 'string' } } },
        spec: {
          type: 'object',
          properties: {
            untyped: { description: 'no type' },
            literal: { type: 'string', const: 'x' },
            list: { type: 'array', items: { type: 'string' }, uniqueItems: true },
            closed: { type: 'object', properties: { a: { type: 'string' } }, additionalProperties: false },
          },
          required: ['missing'],
        },
      },
    });
    expect(problems).toEqual([
      'spec.untyped: type is missing',
      'spec.literal: keyword "const" is not allowed in a CRD schema',
      'spec.list: keyword "uniqueItems" is not allowed in a CRD schema',
      'spec.closed: additionalProperties must be a schema, never a boolean',
      'spec: required property "missing" is not declared',
      'metadata: must be just {type: object}; the apiserver owns it',
    ]);
  });
});
