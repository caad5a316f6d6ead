/**
 * Route schemas are compiled on each route's first request (server/lazy-validators.ts), so a
 * broken schema would no longer stop the start. Here every schema the real gateway registers
 * is compiled at once: a broken one fails the suite instead of some user's first request.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compileDeferredSchemas } from '../../dataplane/src/server/app.ts';
import { apiKey, deployment, fakeBase, startStack, tenant, type Stack } from '../harness/stack.ts';

let stack: Stack;
beforeAll(async () => {
  stack = await startStack(([url]) =>
    [
      deployment({ name: 'mini', model: 'mini', baseUrl: fakeBase(url!) }),
      tenant('acme', ['mini']),
      apiKey('acme-key', 'sk-schemas', 'acme'),
    ].join(''),
  );
});
afterAll(() => stack.close());

describe("the gateway's route schemas", () => {
  it('all compile', () => {
    // Twenty-odd routes carry a body or query schema; each is counted once it compiles.
    expect(compileDeferredSchemas(stack.gateway.app)).toBeGreaterThanOrEqual(20);
  });
});
