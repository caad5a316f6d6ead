import { describe, expect, it } from 'vitest';
import { cleanSchema } from './schema.ts';

describe('gemini schema cleaning', () => {
  it('drops rejected keywords and reports them', () => {
    const { schema, dropped } = cleanSchema({
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      $id: 'x',
      type: 'object',
      strict: true,
      additionalProperties: false,
      properties: {
        email: { type: 'string', format: 'email', minLength: 3 },
        when: { type: 'string', format: 'date-time' },
        n: { type: 'number', multipleOf: 2, exclusiveMinimum: 0 },
        tags: { type: 'array', items: { type: 'string' }, uniqueItems: true, maxItems: 5 },
      },
    });
    expect(schema).toEqual({
      type: 'OBJECT',
      properties: {
        email: { type: 'STRING', minLength: 3 },
        when: { type: 'STRING', format: 'date-time' },
        n: { type: 'NUMBER', minimum: 0 },
        tags: { type: 'ARRAY', items: { type: 'STRING' }, maxItems: 5 },
      },
    });
    expect(dropped).toEqual([
      '$id',
      '$schema',
      'additionalProperties',
      'format',
      'multipleOf',
      'strict',
      'uniqueItems',
    ]);
  });

  it('inlines $defs references and survives recursion', () => {
    const { schema } = cleanSchema({
      type: 'object',
      $defs: {
        point: { type: 'object', properties: { x: { type: 'number' } } },
        node: { type: 'object', properties: { next: { $ref: '#/$defs/node' } } },
      },
      properties: {
        at: { $ref: '#/$defs/point', description: 'where' },
        list: { $ref: '#/$defs/node' },
      },
    });
    expect(schema.properties).toEqual({
      at: { type: 'OBJECT', description: 'where', properties: { x: { type: 'NUMBER' } } },
      // The first expansion of `node` is inlined; its self-reference becomes a bare OBJECT.
      list: { type: 'OBJECT', properties: { next: { type: 'OBJECT' } } },
    });
  });

  it('turns null alternatives into nullable and oneOf into anyOf', () => {
    expect(cleanSchema({ anyOf: [{ type: 'string' }, { type: 'null' }], description: 'opt' }).schema).toEqual(
      {
        type: 'STRING',
        nullable: true,
        description: 'opt',
      },
    );
    expect(cleanSchema({ oneOf: [{ type: 'string' }, { type: 'integer' }] }).schema).toEqual({
      anyOf: [{ type: 'STRING' }, { type: 'INTEGER' }],
    });
    expect(cleanSchema({ type: ['integer', 'boolean'] }).schema).toEqual({
      anyOf: [{ type: 'INTEGER' }, { type: 'BOOLEAN' }],
    });
  });

  it('merges allOf and rewrites const and non-string enums', () => {
    expect(
      cleanSchema({
        allOf: [
          { type: 'object', properties: { a: { const: 'x' } }, required: ['a'] },
          { properties: { b: { type: 'integer', enum: [1, 2] } } },
        ],
      }).schema,
    ).toEqual({
      type: 'OBJECT',
      properties: {
        a: { type: 'STRING', enum: ['x'] },
        b: { type: 'INTEGER', description: 'Allowed values: 1, 2.' },
      },
      required: ['a'],
    });
  });
});
