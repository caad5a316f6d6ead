import type { FastifyInstance } from 'fastify';
import type { ModelList } from '../../formats/openai/types.ts';
import { mayUse, unknownModel, type RequestContext } from '../../pipeline/context.ts';
import { checkModelName } from '../model-name.ts';
import type { RouteHooks } from './hooks.ts';

type ModelObject = ModelList['data'][number];

/** Exactly the models the caller's tenant and key may use. */
export function modelsRoute(app: FastifyInstance, hooks: RouteHooks): void {
  app.get('/v1/models', async (request, reply): Promise<ModelList> => {
    const ctx = hooks.context(request, reply);
    const data = [...ctx.snapshot.models.values()]
      .filter((m) => mayUse(ctx, m.model))
      .map((m) => modelObject(ctx, m.model, m.ownedBy));
    return { object: 'list', data };
  });

  // Model ids may hold a slash (`anthropic/claude-sonnet-4`): the wildcard takes it raw or encoded.
  // Labelled apart from POST /v1/models/* (generateContent): a lookup's latency is not a model call's.
  const lookup = { config: { metricsRoute: '/v1/models/*' } };
  app.get('/v1/models/*', lookup, async (request, reply): Promise<ModelObject> => {
    const ctx = hooks.context(request, reply);
    const id = (request.params as { '*': string })['*'];
    checkModelName('model', id);
    const route = ctx.snapshot.models.get(id);
    // A model the key may not use is reported exactly like one that does not exist.
    if (!route || !mayUse(ctx, id)) throw unknownModel(ctx, id);
    return modelObject(ctx, route.model, route.ownedBy);
  });
}

function modelObject(ctx: RequestContext, id: string, ownedBy: string): ModelObject {
  return {
    id,
    object: 'model',
    created: Math.floor(ctx.snapshot.loadedAt.getTime() / 1000),
    owned_by: ownedBy,
  };
}
