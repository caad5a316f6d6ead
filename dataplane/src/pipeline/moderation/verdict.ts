/**
 * OpenAI moderation results from Gantry's own toxicity detector, for `POST /v1/moderations`
 * when no provider serves moderation. Detector categories map onto OpenAI's; a category the
 * detector does not model (illicit, violence/graphic, sexual/minors, ...) scores 0 and is
 * never flagged — the answer says what Gantry checked, not more.
 */
import { detectToxicity, type Finding } from '../guardrails/index.ts';

export const OPENAI_CATEGORIES = [
  'harassment',
  'harassment/threatening',
  'hate',
  'hate/threatening',
  'illicit',
  'illicit/violent',
  'self-harm',
  'self-harm/intent',
  'self-harm/instructions',
  'sexual',
  'sexual/minors',
  'violence',
  'violence/graphic',
] as const;
export type OpenAICategory = (typeof OPENAI_CATEGORIES)[number];

/** Which OpenAI categories one detector category is evidence for. */
const MAPPING: Readonly<Record<string, readonly OpenAICategory[]>> = {
  insult: ['harassment'],
  profanity: ['harassment'],
  threat: ['harassment/threatening', 'violence'],
  hate: ['hate'],
  sexual: ['sexual'],
  explicit: ['sexual'],
  self_harm: ['self-harm'],
};

export interface ModerationResult {
  flagged: boolean;
  categories: Record<OpenAICategory, boolean>;
  category_scores: Record<OpenAICategory, number>;
  category_applied_input_types: Record<OpenAICategory, ['text'] | []>;
}

export function moderate(text: string, threshold: number): ModerationResult {
  return verdictOf(detectToxicity(text), threshold);
}

export function verdictOf(findings: readonly Finding[], threshold: number): ModerationResult {
  const scores = Object.fromEntries(OPENAI_CATEGORIES.map((c) => [c, 0])) as Record<OpenAICategory, number>;
  for (const f of findings)
    for (const c of MAPPING[f.category] ?? []) scores[c] = Math.max(scores[c], f.score);
  const categories = Object.fromEntries(OPENAI_CATEGORIES.map((c) => [c, scores[c] >= threshold])) as Record<
    OpenAICategory,
    boolean
  >;
  const applied = Object.fromEntries(
    OPENAI_CATEGORIES.map((c) => [c, scores[c] > 0 ? ['text'] : []]),
  ) as ModerationResult['category_applied_input_types'];
  return {
    flagged: Object.values(categories).some(Boolean),
    categories,
    category_scores: scores,
    category_applied_input_types: applied,
  };
}
