import Fastify, { type FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { fastifyValidatorFactory, lazySchemaController, type BuildValidator } from './lazy-validators.ts';

const body = {
  type: 'object',
  required: ['model'],
  properties: { model: { type: 'string', minLength: 1 } },
} as const;

let app: FastifyInstance | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

/** An app with two schema routes whose compiles are recorded by route URL. */
async function appRecordingCompiles(): Promise<{ app: FastifyInstance; compiled: string[] }> {
  const compiled: string[] = [];
  const real = fastifyValidatorFactory();
  const recording: BuildValidator = (external, options) => {
    const compile = real(external, options);
    return (route) => {
      compiled.push(route.url ?? '?');
      return compile(route);
    };
  };
  const a = Fastify({
    schemaController: lazySchemaController(recording),
    ajv: {
      customOptions: { coerceTypes: false, removeAdditional: false, useDefaults: false, allErrors: false },
    },
  });
  for (const url of ['/a', '/b']) a.post(url, { schema: { body } }, async () => ({ ok: true }));
  await a.ready();
  return { app: a, compiled };
}

describe('lazySchemaController', () => {
  it("compiles a route's schema on its first request, once", async () => {
    const made = await appRecordingCompiles();
    app = made.app;
    expect(made.compiled).toEqual([]);

    const ok = await app.inject({ method: 'POST', url: '/a', payload: { model: 'gpt-4o-mini' } });
    expect(ok.statusCode).toBe(200);
    expect(made.compiled).toEqual(['/a']);

    await app.inject({ method: 'POST', url: '/a', payload: { model: 'again' } });
    expect(made.compiled).toEqual(['/a']);
  });

  it('rejects what the schema rejects, with ajv’s message, from the first request on', async () => {
    app = (await appRecordingCompiles()).app;
    const missing = await app.inject({ method: 'POST', url: '/b', payload: {} });
    expect(missing.statusCode).toBe(400);
    expect(missing.json<{ message: string }>().message).toContain("must have required property 'model'");

    const empty = await app.inject({ method: 'POST', url: '/b', payload: { model: '' } });
    expect(empty.statusCode).toBe(400);
    expect(empty.json<{ message: string }>().message).toContain(
      'body/model must NOT have fewer than 1 characters',
    );

    const ok = await app.inject({ method: 'POST', url: '/b', payload: { model: 'm' } });
    expect(ok.statusCode).toBe(200);
  });
});
