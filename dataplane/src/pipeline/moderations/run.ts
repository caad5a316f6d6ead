/**
 * `POST /v1/moderations`: a model whose deployments serve moderations is proxied to them
 * through the router; otherwise Gantry answers from its own guardrail detectors, free of
 * charge (nothing upstream was paid for), but still rate limited and recorded.
 */
import { randomUUID } from 'node:crypto';
import { costUsd } from '../../accounting/cost.ts';
import { estimateTextTokens } from '../../accounting/tokens.ts';
import { notServedHere, type Deployment } from '../../config/snapshot.ts';
import type { AttemptLog } from '../../router/router.ts';
import { admit } from '../admission.ts';
import { accessibleRoute, reachableRoutes, unknownModel, type RequestContext } from '../context.ts';
import { callContext, routeRequest, type PipelineDeps } from '../forward.ts';
import { resolvePolicy } from '../guardrails/index.ts';
import { passthroughCall } from '../passthrough/call.ts';
import { settle, settleAnswered } from '../settlement.ts';
import { moderateText, type ModerationResult } from './builtin.ts';

/** What a moderation call answers with when the caller names no model (OpenAI's default). */
export const DEFAULT_MODERATION_MODEL = 'omni-moderation-latest';
/** The model name Gantry's own answers carry, so a caller can tell who judged. */
export const BUILTIN_MODERATION_MODEL = 'gantry-guardrails';
/** OpenAI's moderation model names: asked for and not configured, Gantry answers them itself. */
const KNOWN_MODERATION_MODELS = new Set([
  DEFAULT_MODERATION_MODEL,
  'omni-moderation-2024-09-26',
  'text-moderation-latest',
  'text-moderation-stable',
  'text-moderation-007',
  BUILTIN_MODERATION_MODEL,
]);

export type ModerationInput =
  | string
  | string[]
  | Array<{ type: string; text?: string | undefined; image_url?: { url: string } | undefined }>;

export interface ModerationRequest {
  model?: string | undefined;
  input: ModerationInput;
  [key: string]: unknown;
}

export interface ModerationResponse {
  id: string;
  model: string;
  results: ModerationResult[];
  [key: string]: unknown;
}

export type ModerationPlan = { kind: 'builtin' } | { kind: 'proxy' };

/** Who answers: deployments with the capability, else Gantry; an unknown model is a 404. */
export function planModeration(ctx: RequestContext, model: string): ModerationPlan {
  const configured = ctx.snapshot.models.has(model);
  if (!configured) {
    // A moderation model configured but left out of this pod is not answered by heuristics.
    if (KNOWN_MODERATION_MODELS.has(model) && !notServedHere(ctx.snapshot, model)) return { kind: 'builtin' };
    throw unknownModel(ctx, model);
  }
  const route = accessibleRoute(ctx, model);
  return route.capabilities.has('moderations') ? { kind: 'proxy' } : { kind: 'builtin' };
}

/** The texts to judge: one per string input; a multimodal input is one text of its text parts. */
export function inputTexts(input: ModerationInput): string[] {
  if (typeof input === 'string') return [input];
  if (input.every((x) => typeof x === 'string')) return input as string[];
  const parts = input as Exclude<ModerationInput, string | string[]>;
  return [
    parts
      .filter((p) => p.type === 'text')
      .map((p) => p.text ?? '')
      .join('\n'),
  ];
}

export interface ModerationOutcome {
  response: ModerationResponse;
  costUsd: number;
  deployment: Deployment | undefined;
  log: AttemptLog;
}

export async function runModeration(
  deps: PipelineDeps,
  ctx: RequestContext,
  req: ModerationRequest,
): Promise<ModerationOutcome> {
  const model = req.model ?? DEFAULT_MODERATION_MODEL;
  Object.assign(ctx.usage, { endpoint: 'moderations', requestedModel: model, stream: false });
  const plan = planModeration(ctx, model);
  const texts = inputTexts(req.input);
  const tokens = () => texts.reduce((n, t) => n + estimateTextTokens(t), 0);
  if (plan.kind === 'builtin') {
    ctx.admission = await admit(deps, ctx, () => [], tokens, { maxTokens: 0 });
    const policy = resolvePolicy(ctx.tenant.guardrails);
    const response: ModerationResponse = {
      id: `modr-${randomUUID().replaceAll('-', '')}`,
      model: BUILTIN_MODERATION_MODEL,
      results: texts.map((t) => moderateText(t, policy)),
    };
    await settle(deps, ctx, {
      status: 200,
      usage: { prompt_tokens: tokens(), completion_tokens: 0 },
      costUsd: 0,
    });
    return { response, costUsd: 0, deployment: undefined, log: { attempts: 1, failed: [] } };
  }
  ctx.admission = await admit(deps, ctx, () => reachableRoutes(ctx, model), tokens, { maxTokens: 0 });
  const routed = await deps.router.execute(routeRequest(ctx, model, ['moderations']), (d) =>
    passthroughCall(callContext(deps, ctx, d), 'POST', 'moderations', req),
  );
  const usage = { prompt_tokens: tokens(), completion_tokens: 0 };
  const cost = costUsd(routed.deployment.pricing, usage);
  await settleAnswered(deps, ctx, routed, cost, usage);
  const response = { ...routed.value, model } as ModerationResponse;
  return { response, costUsd: cost, deployment: routed.deployment, log: routed.log };
}
