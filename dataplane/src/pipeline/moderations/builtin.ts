/**
 * OpenAI's moderation answer computed from Gantry's own guardrail detectors, for models no
 * deployment serves moderations for. Pure: texts and the tenant's policy in, results out.
 *
 * OpenAI's thirteen categories are always present (clients index them); the toxicity
 * detector's categories map onto them, and what it has no notion of (illicit advice,
 * sexual content involving minors, graphic violence) scores 0. Gantry's other three checks
 * are reported under `gantry/…` keys so a caller can tell a secret or PII leak from abuse.
 * `flagged` is true when any category reaches the threshold the tenant's guardrail policy
 * sets for the check that produced it, so moderation agrees with what the gateway enforces.
 */
import {
  detectInjection,
  detectPii,
  detectSecrets,
  detectToxicity,
  type Finding,
  type GuardrailName,
  type ResolvedPolicy,
} from '../guardrails/index.ts';
import { OPENAI_CATEGORIES } from '../../formats/openai/moderation.ts';

export const GANTRY_CATEGORIES = ['gantry/prompt-injection', 'gantry/pii', 'gantry/secrets'] as const;

type Category = (typeof OPENAI_CATEGORIES)[number] | (typeof GANTRY_CATEGORIES)[number];

/** Toxicity detector category → the OpenAI categories it is evidence of. */
const TOXICITY_MAP: Record<string, readonly Category[]> = {
  insult: ['harassment'],
  directed: ['harassment'],
  profanity: ['harassment'],
  threat: ['harassment/threatening', 'violence'],
  hate: ['hate'],
  sexual: ['sexual'],
  explicit: ['sexual'],
  self_harm: ['self-harm', 'self-harm/intent'],
};

const OTHER_CHECKS: Record<Exclude<GuardrailName, 'toxicity'>, Category> = {
  'prompt-injection': 'gantry/prompt-injection',
  pii: 'gantry/pii',
  secrets: 'gantry/secrets',
};

export interface ModerationResult {
  flagged: boolean;
  categories: Record<Category, boolean>;
  category_scores: Record<Category, number>;
  category_applied_input_types: Record<Category, string[]>;
}

function categoriesOf(f: Finding): readonly Category[] {
  if (f.guardrail === 'toxicity') return TOXICITY_MAP[f.category] ?? ['harassment'];
  return [OTHER_CHECKS[f.guardrail]];
}

const checkOf = (c: Category): GuardrailName => {
  if (c === 'gantry/prompt-injection') return 'prompt-injection';
  if (c === 'gantry/pii') return 'pii';
  if (c === 'gantry/secrets') return 'secrets';
  return 'toxicity';
};

function findings(text: string, policy: ResolvedPolicy): Finding[] {
  const out = [...detectInjection(text), ...detectToxicity(text), ...detectSecrets(text)];
  // The tenant's PII entity list narrows what counts, as it does for requests.
  const pii = detectPii(text).filter((f) => !policy.piiEntities || policy.piiEntities.has(f.category));
  return [...out, ...pii];
}

/** One result for one input text; `images` marks inputs that also carried images (not scanned). */
export function moderateText(text: string, policy: ResolvedPolicy): ModerationResult {
  const all = [...OPENAI_CATEGORIES, ...GANTRY_CATEGORIES];
  const scores = Object.fromEntries(all.map((c) => [c, 0])) as Record<Category, number>;
  for (const f of findings(text, policy))
    for (const c of categoriesOf(f)) scores[c] = Math.max(scores[c], roundScore(f.score));
  const categories = {} as Record<Category, boolean>;
  const applied = {} as Record<Category, string[]>;
  for (const c of all) {
    const check = policy.checks[checkOf(c)];
    // A check the tenant turned off still scores, but does not flag.
    categories[c] = check.action !== 'off' && scores[c] > 0 && scores[c] >= check.threshold;
    applied[c] = ['text'];
  }
  return {
    flagged: all.some((c) => categories[c]),
    categories,
    category_scores: scores,
    category_applied_input_types: applied,
  };
}

const roundScore = (s: number): number => Math.round(Math.min(1, Math.max(0, s)) * 1e6) / 1e6;
