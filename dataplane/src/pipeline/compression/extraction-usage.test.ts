import { describe, expect, it } from 'vitest';
import { costUsd } from '../../accounting/cost.ts';
import { estimateCost } from '../../accounting/estimate.ts';
import { estimatePromptTokens, estimateTextTokens } from '../../accounting/tokens.ts';
import type { ModelRoute } from '../../config/snapshot.ts';
import type { ChatCompletion, ChatRequest, Usage } from '../../formats/openai/types.ts';
import { testDeployment } from '../../router/testing.ts';
import { extractionUsage } from './extraction-usage.ts';

const PRICE = { inputPerMillionTokens: 0.15, outputPerMillionTokens: 0.6 };
const XREQ: ChatRequest = {
  model: 'x',
  max_tokens: 1024,
  messages: [{ role: 'user', content: 'word '.repeat(4000) }],
};
const CONTENT = '{"intent":"ship it","active_constraints":[]}';
const answer = (usage: Usage | undefined): ChatCompletion => ({
  id: 'c',
  object: 'chat.completion',
  created: 1,
  model: 'x',
  choices: [{ index: 0, message: { role: 'assistant', content: CONTENT }, finish_reason: 'stop' }],
  ...(usage && { usage }),
});
const usage = (p: number, c: number): Usage => ({
  prompt_tokens: p,
  completion_tokens: c,
  total_tokens: p + c,
});

describe('the extraction charge', () => {
  const deployment = testDeployment({ name: 'x', model: 'x', pricing: PRICE, contextWindow: 128_000 });
  // What hold.ts holds for this call.
  const hold = estimateCost(
    [{ deployments: [deployment] } as unknown as ModelRoute],
    estimatePromptTokens(XREQ),
    {
      maxTokens: XREQ.max_tokens ?? undefined,
    },
  ).costUsd;

  it('charges an honest report as reported', () => {
    const r = extractionUsage(XREQ, deployment, answer(usage(4010, 300)));
    expect(r.usage).toMatchObject(usage(4010, 300));
    expect(r.costUsd).toBe(costUsd(PRICE, usage(4010, 300)));
  });

  it('cuts a corrupt output count at the call max_tokens, within the hold ($600 before)', () => {
    const r = extractionUsage(XREQ, deployment, answer(usage(4010, 1_000_000_000)));
    expect(r.usage.completion_tokens).toBe(1024);
    expect(r.costUsd).toBeLessThanOrEqual(hold);
  });

  it('cuts a corrupt prompt count at the deployment context window', () => {
    const r = extractionUsage(XREQ, deployment, answer(usage(1_000_000_000, 10)));
    expect(r.usage.prompt_tokens).toBe(128_000);
  });

  it.each([
    ['no report', undefined],
    ['a report of nothing for an answer with content', usage(0, 0)],
  ])('bills the gateway count for %s, not $0', (_, reported) => {
    const r = extractionUsage(XREQ, deployment, answer(reported));
    expect(r.usage.prompt_tokens).toBe(estimatePromptTokens(XREQ));
    expect(r.usage.completion_tokens).toBe(estimateTextTokens(CONTENT));
    expect(r.costUsd).toBeGreaterThan(0);
    expect(r.costUsd).toBeLessThanOrEqual(hold);
  });
});
