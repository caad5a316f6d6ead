/**
 * `POST /v1/a2a/{agent}/message/send`: an A2A agent is a ModelDeployment with the `a2a`
 * capability whose `model` is the agent's name and whose `baseUrl` is the agent's JSON-RPC
 * endpoint. Gantry checks the key may use the agent, holds the per-call price, runs the
 * tenant's guardrails over the message's text parts (redacting in place), forwards the call,
 * records who owns the tasks and contexts the agent creates, and charges `pricing.perRequest`
 * for an answer that carries a result (a JSON-RPC error from the agent is not charged), and
 * for a message its client left once it was sent (unanswered-call.ts).
 */
import type { Deployment } from '../../config/snapshot.ts';
import { GatewayError } from '../../errors.ts';
import type { ChatRequest } from '../../formats/openai/types.ts';
import { authHeaders } from '../../providers/openai/request.ts';
import { readJsonObject, sendOk } from '../../router/calls.ts';
import type { AttemptLog } from '../../router/router.ts';
import { UpstreamFailure } from '../../router/upstream.ts';
import { accessibleRoute, type RequestContext } from '../context.ts';
import type { PipelineDeps } from '../forward.ts';
import { guardRequest } from '../guardrails/stage.ts';
import { admitMedia, executeMedia, settleMedia, unitsCharge } from '../media/run.ts';
import { idsOfResult, partKind, RpcCodes, RpcError, type SendCall } from './jsonrpc.ts';
import type { Owner as A2aOwner } from '../../stores/owned/types.ts';
import type { A2aOwnership, A2aThing } from './owners.ts';

const OPENAI_WIRE = new Set(['openai', 'openai-compatible', 'azure-openai']);

export interface A2aOutcome {
  response: Record<string, unknown>;
  costUsd: number;
  deployment: Deployment;
  log: AttemptLog;
}

/** The agent's route, or the same 404 for an agent that does not exist and one the key may not use. */
function agentRoute(ctx: RequestContext, agent: string) {
  let route;
  try {
    route = accessibleRoute(ctx, agent);
  } catch {
    throw new GatewayError('not_found', `agent ${agent} does not exist or is not enabled for this key`, {
      refusedModel: agent,
    });
  }
  if (!route.capabilities.has('a2a'))
    throw new GatewayError(
      'not_found',
      `${agent} is a model, not an A2A agent (no deployment has the a2a capability)`,
    );
  return route;
}

/** The tasks and contexts a message names, each once, in the order they are checked. */
export function namedIds(m: SendCall['params']['message']): [A2aThing, string][] {
  const tasks = new Set([...(m.taskId ? [m.taskId] : []), ...(m.referenceTaskIds ?? [])]);
  return [
    ...[...tasks].map((t) => ['task', t] as [A2aThing, string]),
    ...(m.contextId ? [['context', m.contextId] as [A2aThing, string]] : []),
  ];
}

/** Tasks and contexts named must be ones an agent answer gave this tenant and key. */
async function checkOwnership(
  call: SendCall,
  agent: string,
  owners: A2aOwnership,
  owner: A2aOwner,
): Promise<void> {
  const named = namedIds(call.params.message);
  // At most 66 lookups (the list is capped when read), so they go to the store together.
  const owned = await Promise.all(named.map(([thing, id]) => owners.owns(agent, thing, id, owner)));
  const missing = named.find((_, i) => !owned[i]);
  if (missing)
    throw new RpcError(RpcCodes.taskNotFound, `${missing[0]} ${missing[1].slice(0, 128)} not found`, call.id);
}

/** Guardrails over the text parts, as one user message each; redactions are written back. */
function guardParts(ctx: RequestContext, call: SendCall, agent: string): SendCall {
  const parts = call.params.message.parts;
  const texts = parts.flatMap((p, i) => (partKind(p) === 'text' ? [{ i, text: p.text ?? '' }] : []));
  if (texts.length === 0) return call;
  const probe: ChatRequest = {
    model: agent,
    messages: texts.map((t) => ({ role: 'user', content: t.text })),
  };
  const guarded = guardRequest(ctx, probe);
  if (guarded === probe) return call;
  const out = [...parts];
  for (const [n, t] of texts.entries()) {
    const content = guarded.messages[n]?.content;
    if (typeof content === 'string') out[t.i] = { ...parts[t.i], text: content };
  }
  return { ...call, params: { ...call.params, message: { ...call.params.message, parts: out } } };
}

export async function runA2a(
  deps: PipelineDeps,
  ctx: RequestContext,
  agent: string,
  call: SendCall,
  owners: A2aOwnership,
): Promise<A2aOutcome> {
  // Named before the lookup, so a refused made-up agent is recorded and counted under its name.
  Object.assign(ctx.usage, { endpoint: 'a2a', requestedModel: agent, stream: false });
  agentRoute(ctx, agent);
  const owner = { tenant: ctx.tenant.name, keyId: ctx.key.id };
  // Admission (rate limit, budget hold) before the store lookups, so a key past its rate pays
  // nothing more than the refusal; the hold of a call refused for ownership is released by
  // the route's settlement of the JSON-RPC error.
  const routing = await admitMedia(deps, ctx, {
    endpoint: 'a2a',
    path: '/v1/a2a/{agent}/message/send',
    model: agent,
    capability: 'a2a',
    unit: 'perRequest',
    estimateUnits: 1,
  });
  await checkOwnership(call, agent, owners, owner);
  const sent = guardParts(ctx, call, agent);
  // A message may start a task (or act: book, buy, send) on the agent: once an attempt may have
  // reached it, the message is not sent to another deployment of the agent.
  const routed = await executeMedia(
    deps,
    ctx,
    { ...routing, createsObject: true },
    async (c) => {
      const target = c.deployment.target;
      if (!OPENAI_WIRE.has(target.provider))
        throw new UpstreamFailure({
          kind: 'bad_request',
          status: 0,
          message: `deployment ${c.deployment.name} (${target.provider}) cannot be an A2A agent; use provider openai-compatible`,
        });
      const res = await sendOk(
        c,
        { method: 'POST', url: target.baseUrl, headers: authHeaders(target), body: JSON.stringify(sent) },
        false,
      );
      return readJsonObject(c, res);
    },
    // Left once sent: the agent has the message and acts on it; charged the one request an
    // answer with a result is (one with a JSON-RPC error is free, but not yet known).
    unitsCharge('perRequest', 1),
  );
  const answer = routed.value;
  const answered = answer.result !== undefined && answer.error === undefined;
  if (answered) {
    const ids = idsOfResult(answer.result);
    // The answer is served: an ownership the store cannot keep only makes the ids unusable later.
    const keep = (thing: A2aThing, id: string | undefined) =>
      id === undefined
        ? undefined
        : owners.claim(agent, thing, id, owner).catch((err: unknown) => {
            ctx.log.warn({ err: (err as Error).message }, 'a2a ownership not stored');
          });
    await Promise.all([keep('task', ids.taskId), keep('context', ids.contextId)]);
  }
  const cost = await settleMedia(deps, ctx, routed, 'perRequest', answered ? 1 : 0);
  return { response: answer, costUsd: cost, deployment: routed.deployment, log: routed.log };
}
