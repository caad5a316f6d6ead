/**
 * A conversation that names uploaded files is served by the deployment holding them, and
 * only when every one is the caller's (tenant and key): another's id is the 404 of an
 * unknown id, naming the field, before any upstream call. Requests naming no file pay one
 * walk over their content parts and no store lookup.
 */
import type { Capability } from '@gantry/crds';
import type { Deployment } from '../../config/snapshot.ts';
import { invalidParam } from '../../errors.ts';
import type { ChatRequest } from '../../formats/openai/types.ts';
import { mayUse, unknownModel, type RequestContext } from '../context.ts';
import type { PipelineDeps } from '../forward.ts';
import type { NamedObject } from '../../router/lost-object.ts';
import { contentFileReferences } from './content-references.ts';
import { namedObjects, resolveReferences } from './owned.ts';
import { placement } from './select.ts';

/** The deployment holding the conversation's files, and the field naming the first of them. */
export interface PinnedTo {
  deployment: Deployment;
  field: string;
  /** Every file named, for telling the upstream's 404 of one of them from a failed deployment. */
  objects: readonly NamedObject[];
}

export async function holderOfReferencedFiles(
  deps: PipelineDeps,
  ctx: RequestContext,
  req: ChatRequest,
  needs: readonly Capability[],
): Promise<PinnedTo | undefined> {
  const refs = contentFileReferences(req.messages);
  if (refs.length === 0) return undefined;
  const referred = await resolveReferences(deps, ctx, refs);
  if (!referred) return undefined;
  // The same decision the resource families make: the holder must serve the requested model.
  placement({
    models: ctx.snapshot.models,
    allowed: (m) => mayUse(ctx, m),
    unknown: (m) => unknownModel(ctx, m),
    capability: 'chat',
    what: 'chat requests',
    requestedModel: req.model,
    pinned: { deployment: referred.deployment, field: referred.field },
  });
  const missing = needs.find((c) => !referred.deployment.capabilities.has(c));
  if (missing !== undefined)
    throw invalidParam(
      referred.field,
      `refers to a file on deployment ${referred.deployment.name}, which lacks the ${missing} capability this request needs`,
    );
  return { deployment: referred.deployment, field: referred.field, objects: namedObjects(refs) };
}
