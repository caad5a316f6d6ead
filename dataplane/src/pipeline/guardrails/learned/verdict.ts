/**
 * How the learned layer joins the rules. The rules keep their findings (named categories,
 * exact spans, explainable); the model adds one finding per text, category `classifier`,
 * spanning its best window, when its score reaches REPORT_FLOOR. The check's verdict is then
 * the highest score among all findings against the policy threshold: the rules catch what
 * they were written for with a reason attached, the model catches the phrasings and
 * languages they were not, and neither can veto the other. The model's score is 0.5
 * exactly at the operating point chosen on the dev split (see model.ts, toScore).
 */
import type { Finding, GuardrailName } from '../types.ts';
import type { WindowScore } from './model.ts';

/**
 * The model speaks only at or above its operating point: below it, its score is a guess
 * a tenant cannot read, and it would crowd the rules' named, explainable findings.
 */
export const REPORT_FLOOR = 0.5;
export const LEARNED_CATEGORY = 'classifier';

export function learnedFinding(guardrail: GuardrailName, s: WindowScore): Finding[] {
  if (s.score < REPORT_FLOOR) return [];
  return [
    {
      guardrail,
      category: LEARNED_CATEGORY,
      score: Math.min(0.99, s.score),
      start: s.start,
      end: s.end,
    },
  ];
}

/**
 * The same window score against a cut `margin` logit units higher: the model must be
 * that much surer (toScore maps the cut to 0.5 with slope 2).
 */
export function withMargin(s: WindowScore, margin: number): WindowScore {
  if (margin === 0 || s.score <= 0 || s.score >= 1) return s;
  const z = Math.log(s.score / (1 - s.score)) - 2 * margin;
  return { ...s, score: 1 / (1 + Math.exp(-z)) };
}
