import type { FastifyInstance } from 'fastify';
import type { ModelList } from '../../formats/openai/types.ts';
import { mayUse } from '../../pipeline/context.ts';
import type { RouteHooks } from './hooks.ts';

/** Exactly the models the caller's tenant and key may use. */
export function modelsRoute(app: FastifyInstance, hooks: RouteHooks): void {
  app.get('/v1/models', async (request, reply): Promise<ModelList> => {
    const ctx = hooks.context(request, reply);
    const created = Math.floor(ctx.snapshot.loadedAt.getTime() / 1000);
    const data = [...ctx.snapshot.models.values()]
      .filter((m) => mayUse(ctx, m.model))
      .map((m) => ({ id: m.model, object: 'model' as const, created, owned_by: m.ownedBy }));
    return { object: 'list', data };
  });
}
