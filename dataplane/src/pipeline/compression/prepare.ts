/**
 * Everything the stage decides before the extraction call, in one pure function: count
 * tokens (once per message; not at all when the characters alone prove the request below
 * the threshold), gate, zone, profile, and build the extraction request. This is what
 * `npm run bench` times for a 100k-token conversation.
 */
import type { ChatRequest } from '../../formats/openai/types.ts';
import { planCompression, type Plan } from './decide.ts';
import { extractionRequest } from './extraction.ts';
import { cheapCount, measure, toolTokens } from './measure.ts';
import type { CompressionPolicy } from './policy.ts';
import { TUNING } from './profile.ts';
import type { Measured, StepFormat } from './types.ts';

export interface Prepared {
  plan: Plan;
  measured: Measured[];
  /** The extraction call to make; only when the plan compresses. */
  extraction: ChatRequest | undefined;
}

export function prepareCompression(
  req: ChatRequest,
  policy: Pick<CompressionPolicy, 'thresholdTokens' | 'stepWindow'>,
  format: StepFormat,
  extractionModel: string | undefined,
): Prepared {
  const cheap = cheapCount(req);
  if (cheap.upper < policy.thresholdTokens) {
    // Certainly below (tokens ≤ characters): no BPE pass; the headers carry the estimate.
    const fallback = {
      reason: 'below_threshold' as const,
      tokens: cheap.estimate,
      threshold: policy.thresholdTokens,
    };
    return {
      plan: { kind: 'pass', fallback, originalTokens: cheap.estimate },
      measured: [],
      extraction: undefined,
    };
  }
  const measured = measure(req.messages);
  const plan = planCompression({
    measured,
    toolTokens: toolTokens(req),
    thresholdTokens: policy.thresholdTokens,
    stepWindow: policy.stepWindow,
    format,
    extractionModel,
  });
  if (plan.kind === 'pass') return { plan, measured, extraction: undefined };
  const history = plan.zones.history.map((i) => measured[i]!);
  return {
    plan,
    measured,
    extraction: extractionRequest(plan.extractionModel, plan.profile, history, TUNING[plan.profile]),
  };
}
