import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../errors.ts';
import { cleanSchema, MAX_SCHEMA_LEVELS, MAX_SCHEMA_NODES } from './schema.ts';

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

describe('gemini schema cleaning is bounded', () => {
  const refusal = (input: unknown): GatewayError => {
    try {
      cleanSchema(input, 'tools[2].function.parameters');
    } catch (err) {
      expect(err).toBeInstanceOf(GatewayError);
      return err as GatewayError;
    }
    throw new Error('expected a refusal');
  };

  it('refuses definitions that double at each step (2^40 nodes once inlined) at once', () => {
    const defs: Record<string, unknown> = { d40: { type: 'string' } };
    for (let i = 0; i < 40; i++)
      defs[`d${i}`] = {
        type: 'object',
        properties: { l: { $ref: `#/$defs/d${i + 1}` }, r: { $ref: `#/$defs/d${i + 1}` } },
      };
    const started = Date.now();
    const err = refusal({ type: 'object', properties: { x: { $ref: '#/$defs/d0' } }, $defs: defs });
    expect(Date.now() - started).toBeLessThan(1000);
    expect(err.status).toBe(400);
    expect(err.param).toBe('tools[2].function.parameters');
    expect(err.message).toBe(
      `tools[2].function.parameters: schema grows beyond ${MAX_SCHEMA_NODES} nodes once $refs are inlined`,
    );
  });

  it('refuses a chain of flat definitions deeper than the bound, and deep nesting itself', () => {
    const chain: Record<string, unknown> = {};
    for (let i = 0; i < 2000; i++) chain[`d${i}`] = { allOf: [{ $ref: `#/$defs/d${i + 1}` }] };
    const viaRefs = refusal({ $ref: '#/$defs/d0', $defs: chain });
    expect(viaRefs.message).toMatch(`schema nests deeper than ${MAX_SCHEMA_LEVELS} levels`);

    let items: unknown = { type: 'string' };
    for (let i = 0; i < MAX_SCHEMA_LEVELS + 1; i++) items = { type: 'array', items };
    expect(refusal({ type: 'object', properties: { x: items } }).message).toMatch('nests deeper');
  });

  it('converts a schema just inside the bounds', () => {
    let items: unknown = { type: 'string' };
    for (let i = 0; i < MAX_SCHEMA_LEVELS - 2; i++) items = { type: 'array', items };
    const { schema } = cleanSchema({ type: 'object', properties: { x: items } });
    expect(schema.type).toBe('OBJECT');
    // Serialising the result must be safe too.
    expect(JSON.stringify(schema).length).toBeGreaterThan(MAX_SCHEMA_LEVELS);
  });
});
