/**
 * `POST /v1/moderations` answered by Gantry's own guardrail detector (pipeline/moderation):
 * no provider is called and nothing is charged. Flagging uses the tenant's toxicity threshold.
 * Image inputs are refused by name: the detector reads text only.
 */
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { randomUUID } from 'node:crypto';
import { invalidParam } from '../../errors.ts';
import { resolvePolicy } from '../../pipeline/guardrails/policy.ts';
import { moderate } from '../../pipeline/moderation/verdict.ts';
import type { RouteHooks } from './hooks.ts';

const Part = Type.Object(
  { type: Type.String({ minLength: 1 }), text: Type.Optional(Type.String()) },
  { additionalProperties: true },
);
const ModerationRequest = Type.Object(
  {
    input: Type.Union([
      Type.String(),
      Type.Array(Type.String(), { minItems: 1, maxItems: 2048 }),
      Type.Array(Part, { minItems: 1, maxItems: 2048 }),
    ]),
    model: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
  },
  { additionalProperties: true },
);
type Input = string | string[] | { type: string; text?: string }[];

/** The model name Gantry answers as: its detector, whatever the client named. */
export const MODERATION_MODEL = 'gantry-guardrails';

export function moderationsRoute(app: FastifyInstance, hooks: RouteHooks): void {
  app.post('/v1/moderations', { schema: { body: ModerationRequest } }, async (request, reply) => {
    const ctx = hooks.context(request, reply);
    const input = (request.body as { input: Input }).input;
    const texts = typeof input === 'string' ? [input] : input.map((v, i) => textOf(v, i));
    const threshold = resolvePolicy(ctx.tenant.guardrails).checks.toxicity.threshold;
    return {
      id: `modr-${randomUUID().replaceAll('-', '')}`,
      model: MODERATION_MODEL,
      results: texts.map((t) => moderate(t, threshold)),
    };
  });
}

function textOf(v: string | { type: string; text?: string }, i: number): string {
  if (typeof v === 'string') return v;
  if (v.type === 'text' && typeof v.text === 'string') return v.text;
  throw invalidParam(
    `input[${i}].type`,
    `${JSON.stringify(v.type)} is not supported: only text is moderated here`,
  );
}
