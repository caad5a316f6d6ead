import { ResponseHeaders } from '../../brand.ts';
import { formatUsd } from '../../accounting/cost.ts';
import type { RequestContext } from '../../pipeline/context.ts';
import type { Served } from '../../pipeline/chat.ts';
import { attemptHeaders } from '../../router/router.ts';

/** X-Gantry-Provider / -Attempts / -Failed, and -Cost when it is known up front. */
export function servedHeaders(ctx: RequestContext, served: Served, costUsd?: number): Record<string, string> {
  const headers: Record<string, string> = {
    ...ctx.responseHeaders,
    [ResponseHeaders.provider]: served.deployment?.name ?? 'cache',
    ...attemptHeaders(served.log),
  };
  if (costUsd !== undefined) headers[ResponseHeaders.cost] = formatUsd(costUsd);
  return headers;
}
