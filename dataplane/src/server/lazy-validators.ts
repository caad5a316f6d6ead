/**
 * Request schemas compiled on their route's first request instead of at start-up. Fastify
 * compiles every route's schema with ajv when the app becomes ready: about 55 MB of
 * allocation for the twenty-odd routes, left as old-space garbage that a freshly started
 * gateway carries until its first full GC (16 MB of idle RSS), while most deployments call
 * two or three of the routes. The compiler is Fastify's own (`@fastify/ajv-compiler`, resolved
 * from Fastify's package so it is the copy Fastify would use) with the app's `ajv` options,
 * so a request is judged exactly as before; only the moment of compiling moves.
 */
import type { FastifyServerOptions } from 'fastify';
import { createRequire } from 'node:module';

type SchemaController = NonNullable<FastifyServerOptions['schemaController']>;
export type BuildValidator = NonNullable<NonNullable<SchemaController['compilersFactory']>['buildValidator']>;
type RouteCompiler = ReturnType<BuildValidator>;
type Validate = ReturnType<RouteCompiler>;

/** The validator factory Fastify uses when none is given. */
export function fastifyValidatorFactory(): BuildValidator {
  const fromFastify = createRequire(createRequire(import.meta.url).resolve('fastify'));
  const selector = fromFastify('@fastify/ajv-compiler') as () => BuildValidator;
  return selector();
}

/** `compile(route)` deferred to the first call; ajv's `errors` are passed on as Fastify reads them. */
function deferred(
  compile: RouteCompiler,
  route: Parameters<RouteCompiler>[0],
  onDefer?: (compileNow: () => void) => void,
): Validate {
  let validate: Validate | undefined;
  onDefer?.(() => {
    validate ??= compile(route);
  });
  const lazy = ((...args: Parameters<Validate>) => {
    validate ??= compile(route);
    const result = validate(...args);
    (lazy as { errors?: unknown }).errors = (validate as { errors?: unknown }).errors;
    return result;
  }) as Validate;
  // Fastify hands an ajv validator its parent object (so coercion or defaults could replace a
  // root value) only when it sees `schemaEnv`, which ajv's compiled functions carry; the
  // wrapper forwards both arguments, so it says the same.
  (lazy as { schemaEnv?: unknown }).schemaEnv = true;
  return lazy;
}

/**
 * Fastify's `schemaController` option that compiles each route's schemas on first use.
 * `onDefer` receives, per deferred schema, a function compiling it now: a test compiles every
 * route's schema through it, so a broken one still fails the suite, not a first request.
 */
export function lazySchemaController(
  build: BuildValidator = fastifyValidatorFactory(),
  onDefer?: (compileNow: () => void) => void,
): SchemaController {
  return {
    compilersFactory: {
      buildValidator: (externalSchemas, ajvOptions) => {
        const compile = build(externalSchemas, ajvOptions);
        return (route) => deferred(compile, route, onDefer);
      },
    },
  };
}
