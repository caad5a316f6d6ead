/**
 * Section "compression-decision" (issue 12): what the compression stage costs before its
 * extraction call (count tokens, gate, profile, zone, score History and build the extraction
 * prompt: `prepareCompression`), on generated agent traces of ~100k tokens. Two cases:
 *   warm – the conversation's next turn: its history was counted before (the agent resends
 *          it; the tokenizer remembers long texts), the case of every turn but the first;
 *   cold – a conversation never seen: every message goes through the BPE tokenizer.
 * Plus the work after the call (facts, merge, assembly).
 */
import { estimateTextTokens } from '../../dataplane/src/accounting/tokens.ts';
import { assemble } from '../../dataplane/src/pipeline/compression/decide.ts';
import { extractFacts } from '../../dataplane/src/pipeline/compression/facts.ts';
import { agentTrace } from '../../dataplane/src/pipeline/compression/fixtures.ts';
import { prepareCompression } from '../../dataplane/src/pipeline/compression/prepare.ts';
import { mergeFacts, parseState, stateMessage } from '../../dataplane/src/pipeline/compression/state.ts';
import { fakeExtraction } from '../../dataplane/src/fake-provider/extraction.ts';
import { below } from './checks.ts';
import { sectionNumber } from './options.ts';
import type { BenchContext, Section, SectionResult, Table } from './section.ts';
import { fmtMs, sampleSync, summariseTimes, timeSync, type Timing } from './timing.ts';

export const DECISION_TARGET_MS = 20;
const POLICY = { thresholdTokens: 8000, stepWindow: 4 };
/** Steps of `agentTrace` that make about 100k tokens. */
const STEPS = 88;

async function run(ctx: BenchContext): Promise<SectionResult> {
  const iterations = sectionNumber(process.env, 'BENCH_COMPRESSION_ITERATIONS', 50, 'count');
  const coldRuns = sectionNumber(process.env, 'BENCH_COMPRESSION_COLD', 8, 'count');
  estimateTextTokens('warm the tokenizer');
  const conv = agentTrace(1, STEPS).request;
  const first = prepareCompression(conv, POLICY, 'chat', 'cheap');
  const tokens = first.plan.originalTokens;
  ctx.log(`agent trace: ${conv.messages.length} messages, ${tokens} tokens, plan ${first.plan.kind}`);

  const warm = timeSync(() => prepareCompression(conv, POLICY, 'chat', 'cheap'), { warmup: 5, iterations });
  // Cold: a different conversation every time (distinct seeds), so nothing is remembered.
  const cold = summariseTimes(
    Array.from({ length: coldRuns }, (_, i) => {
      const fresh = agentTrace(1000 + i, STEPS).request;
      return sampleSync(() => prepareCompression(fresh, POLICY, 'chat', 'cheap'), {
        warmup: 0,
        iterations: 1,
      })[0]!;
    }),
  );
  const plan = first.plan;
  const after: Timing | undefined =
    plan.kind === 'compress' && first.extraction
      ? timeSync(
          () => {
            const history = plan.zones.history.map((i) => conv.messages[i]!);
            const parsed = parseState(fakeExtraction(String(first.extraction!.messages[1]?.content)));
            if (!parsed.ok) throw new Error(parsed.problem);
            const state = mergeFacts(parsed.state, extractFacts(history));
            return assemble(conv.messages, plan.zones, [stateMessage(state)]);
          },
          { warmup: 3, iterations: Math.max(5, Math.floor(iterations / 5)) },
        )
      : undefined;

  const rows: [string, Timing][] = [
    ['before the call, warm (next turn)', warm],
    ['before the call, cold (never seen)', cold],
    ...(after ? ([['after the call (facts, merge, assembly)', after]] as [string, Timing][]) : []),
  ];
  for (const [name, t] of rows)
    ctx.log(`  ${name.padEnd(40)} p50 ${fmtMs(t.p50)} ms  p99 ${fmtMs(t.p99)} ms`);
  const table: Table = {
    title: `Compression decision on a ${tokens}-token agent trace, in process (ms)`,
    columns: ['path', 'p50', 'p99', 'max', 'timed calls'],
    rows: rows.map(([name, t]) => [name, fmtMs(t.p50), fmtMs(t.p99), fmtMs(t.max), String(t.iterations)]),
  };
  return {
    tables: [table],
    checks: [
      below(
        { name: 'compression decision p50, 100k tokens, warm', value: warm.p50, unit: ' ms', digits: 2 },
        DECISION_TARGET_MS,
      ),
    ],
    notes: [
      'cold includes one BPE pass over every message (the tokenizer dominates); admission pays it too and shares the memo',
    ],
    data: { tokens, messages: conv.messages.length, warm, cold, after },
  };
}

export const compressionDecision: Section = {
  name: 'compression-decision',
  title: 'Compression decision: prepareCompression on a 100k-token agent trace',
  run,
};
