/**
 * The compression evaluation: each conversation of a corpus through the stage's own steps
 * (prepare, extraction answered by `answer`, schema check, fact merge, assembly), without
 * network or CCR, then per profile: token savings and whether every path, identifier,
 * pending requirement and unresolved error of the original is still in the compressed
 * request. `test/eval/compression-eval.ts` prints it; README.md has the table.
 */
import type { ChatRequest } from '../../formats/openai/types.ts';
import { assemble, worthIt } from './decide.ts';
import { extractFacts } from './facts.ts';
import type { Generated, GeneratedFacts } from './fixtures.ts';
import { messageTokens } from './measure.ts';
import { DEFAULT_STEP_WINDOW, DEFAULT_THRESHOLD_TOKENS } from './policy.ts';
import { prepareCompression } from './prepare.ts';
import { mergeFacts, parseState, stateMessage } from './state.ts';
import type { Profile } from './types.ts';

export interface CaseResult {
  kind: Generated['kind'];
  profile: Profile | undefined;
  mode: 'state' | 'none';
  fallback: string | undefined;
  originalTokens: number;
  tokens: number;
  facts: number;
  kept: number;
  missing: string[];
}

function factsIn(text: string, facts: GeneratedFacts): { total: number; missing: string[] } {
  const all = [...facts.paths, ...facts.identifiers, ...facts.requirements, ...facts.errors];
  // The state is JSON: a fact with quotes or backslashes appears escaped.
  const missing = all.filter((f) => !text.includes(f) && !text.includes(JSON.stringify(f).slice(1, -1)));
  return { total: all.length, missing };
}

export function evaluateCase(g: Generated, answer: (prompt: string) => string): CaseResult {
  const req: ChatRequest = g.request;
  const policy = { thresholdTokens: DEFAULT_THRESHOLD_TOKENS, stepWindow: DEFAULT_STEP_WINDOW };
  const { plan, extraction } = prepareCompression(req, policy, 'chat', 'extraction-model');
  const pass = (fallback: string): CaseResult => {
    const f = factsIn(JSON.stringify(req.messages), g.facts);
    return {
      kind: g.kind,
      profile: plan.kind === 'compress' ? plan.profile : undefined,
      mode: 'none',
      fallback,
      originalTokens: plan.originalTokens,
      tokens: plan.originalTokens,
      facts: f.total,
      kept: f.total - f.missing.length,
      missing: f.missing,
    };
  };
  if (plan.kind === 'pass' || !extraction)
    return pass(plan.kind === 'pass' ? plan.fallback.reason : 'no_model');
  const parsed = parseState(answer(String(extraction.messages[1]?.content ?? '')));
  if (!parsed.ok) return pass('extraction_failed');
  const history = plan.zones.history.map((i) => req.messages[i]!);
  const state = mergeFacts(parsed.state, extractFacts(history));
  const inserted = [stateMessage(state)];
  const messages = assemble(req.messages, plan.zones, inserted);
  const tokens = plan.keptTokens + messageTokens(inserted[0]!);
  if (!worthIt(plan.originalTokens, tokens)) return pass('no_savings');
  const f = factsIn(JSON.stringify(messages), g.facts);
  return {
    kind: g.kind,
    profile: plan.profile,
    mode: 'state',
    fallback: undefined,
    originalTokens: plan.originalTokens,
    tokens,
    facts: f.total,
    kept: f.total - f.missing.length,
    missing: f.missing,
  };
}

export interface GroupSummary {
  kind: Generated['kind'];
  conversations: number;
  compressed: number;
  over50k: number;
  originalTokens: number;
  tokens: number;
  /** 1 − tokens/original over the whole group. */
  savings: number;
  facts: number;
  kept: number;
}

export function summarise(results: readonly CaseResult[]): GroupSummary[] {
  const kinds = [...new Set(results.map((r) => r.kind))];
  return kinds.map((kind) => {
    const rs = results.filter((r) => r.kind === kind);
    const originalTokens = rs.reduce((n, r) => n + r.originalTokens, 0);
    const tokens = rs.reduce((n, r) => n + r.tokens, 0);
    return {
      kind,
      conversations: rs.length,
      compressed: rs.filter((r) => r.mode === 'state').length,
      over50k: rs.filter((r) => r.originalTokens > 50_000).length,
      originalTokens,
      tokens,
      savings: originalTokens > 0 ? 1 - tokens / originalTokens : 0,
      facts: rs.reduce((n, r) => n + r.facts, 0),
      kept: rs.reduce((n, r) => n + r.kept, 0),
    };
  });
}

export function formatSummary(groups: readonly GroupSummary[]): string {
  const lines = [
    '| corpus | conversations | compressed | over 50k tokens | tokens before | tokens after | savings | facts kept |',
    '|---|---|---|---|---|---|---|---|',
  ];
  for (const g of groups)
    lines.push(
      `| ${g.kind} | ${g.conversations} | ${g.compressed} | ${g.over50k} | ${g.originalTokens} | ${g.tokens} | ` +
        `${(g.savings * 100).toFixed(1)} % | ${g.kept}/${g.facts} (${g.facts ? ((g.kept / g.facts) * 100).toFixed(1) : '100.0'} %) |`,
    );
  return lines.join('\n');
}
