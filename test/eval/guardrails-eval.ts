/**
 * Guardrail quality and speed report.
 *
 *   npx tsx test/eval/guardrails-eval.ts [corpus.jsonl ...]
 *
 * Prints, per detector, on the dev and held-out test splits (guard-splits.ts): recall,
 * precision, false positives on benign look-alikes, F2 for PII and secrets, recall per kind
 * and language; then precision/recall/F1 on the hand-written corpus files with their
 * misclassified ids, and the p50/p99 time of scanRequest over a synthetic 20,000-token
 * conversation with all four checks on (first sight, and the next turn with the history's
 * findings remembered, as the stage scans per tenant) and over a ~1 KB default request,
 * with the machine's load average. `npm run eval` runs it; with file arguments it reports
 * only those corpus files, with `--timing` only the timing.
 */
import { readFileSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { ChatMessage, ChatRequest } from '../../dataplane/src/formats/openai/types.ts';
import { evaluate, parseCases, type Score } from '../../dataplane/src/pipeline/guardrails/evaluate.ts';
import { scanRequest } from '../../dataplane/src/pipeline/guardrails/scan.ts';
import { detect as detectInjection } from '../../dataplane/src/pipeline/guardrails/injection.ts';
import { detect as detectPii } from '../../dataplane/src/pipeline/guardrails/pii.ts';
import { detect as detectSecrets } from '../../dataplane/src/pipeline/guardrails/secrets.ts';
import { detect as detectToxicity } from '../../dataplane/src/pipeline/guardrails/toxicity.ts';
import type { GuardrailPolicySpec } from '@gantry/crds';
import { evaluateSplit, type Rate } from '../../dataplane/src/pipeline/guardrails/learned/evaluate.ts';
import { evaluateEntities } from '../../dataplane/src/pipeline/guardrails/learned/entities.ts';
import { learnedSplit, piiSplit, secretsSplit, type Split } from './guard-splits.ts';

const DATA = join(dirname(fileURLToPath(import.meta.url)), '..', 'data', 'guardrails');

/** Every check on, so the timing covers all four detectors on every text they apply to. */
export const ALL_ON: GuardrailPolicySpec = {
  promptInjection: { action: 'block' },
  toxicity: { action: 'flag' },
  pii: { action: 'redact' },
  secrets: { action: 'redact' },
};

const PROSE = [
  'The deployment pipeline builds the container image, runs the unit tests and pushes the image to the registry before the rollout starts.',
  'We noticed that the p99 latency of the checkout service doubled after the last release, mostly on requests that hit the inventory cache.',
  'Can you explain why the reducer re-renders every component, and suggest a way to memoise the selector without breaking the tests?',
  'In the meeting on Thursday the team agreed to migrate the reporting jobs to the new scheduler and to retire the cron host by the end of the quarter.',
  'Our customers in Germany and France asked for invoices in their own language, so the template engine needs locale-aware number formatting.',
  'The model answered the question correctly, but the explanation skipped the step where the interest is compounded monthly rather than yearly.',
  'Please summarise the incident report: the database failover took four minutes because the health check interval was set to sixty seconds.',
  'If the queue depth stays above ten thousand for more than five minutes, the autoscaler adds two workers and sends a notice to the on-call channel.',
  'Write a short paragraph for the release notes that explains the new retry policy and the fact that idempotency keys are now required.',
  'Die Kunden erwarten eine Antwort innerhalb von zwei Werktagen, deshalb priorisieren wir die Tickets nach dem Vertragsumfang.',
];

const CODE = [
  '```ts\nexport async function fetchOrders(client: HttpClient, page = 1): Promise<Order[]> {\n  const res = await client.get(`/v1/orders?page=${page}&limit=50`);\n  if (res.status !== 200) throw new Error(`unexpected status ${res.status}`);\n  return (await res.json()).items.map(toOrder);\n}\n```',
  '```python\ndef moving_average(values: list[float], window: int = 7) -> list[float]:\n    out = []\n    for i in range(len(values) - window + 1):\n        out.append(sum(values[i : i + window]) / window)\n    return out\n```',
  '```yaml\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: checkout\nspec:\n  replicas: 3\n  template:\n    spec:\n      containers:\n        - name: app\n          image: registry.internal/checkout:2.14.3\n          resources: {limits: {cpu: "500m", memory: 512Mi}}\n```',
  '```\n2026-03-14T10:22:31.118Z INFO  request_id=3f2b8c1e-9a7d-4e2f-b6a1-0c5d8e7f9a12 method=GET path=/v1/orders status=200 duration_ms=41\n2026-03-14T10:22:31.402Z WARN  request_id=8a1c0e77-1b2d-4c3e-9f00-aa11bb22cc33 retry=2 upstream=inventory timeout_ms=3000\n```',
  "```sql\nSELECT customer_id, COUNT(*) AS orders, SUM(total_cents) / 100.0 AS revenue\nFROM orders\nWHERE created_at >= NOW() - INTERVAL '30 days'\nGROUP BY customer_id\nORDER BY revenue DESC\nLIMIT 20;\n```",
];

/** ~80 KB of mixed prose, code and logs, deterministic, with no attack in it. */
export function benchConversation(targetChars = 80_000): ChatRequest {
  const messages: ChatMessage[] = [
    {
      role: 'system',
      content: 'You are a helpful engineering assistant for the platform team. Answer concisely.',
    },
  ];
  let size = 0;
  for (let turn = 0; size < targetChars; turn++) {
    const user = [
      PROSE[turn % PROSE.length],
      PROSE[(turn * 3 + 1) % PROSE.length],
      CODE[turn % CODE.length],
    ].join('\n\n');
    const assistant = [
      PROSE[(turn * 7 + 2) % PROSE.length],
      CODE[(turn + 2) % CODE.length],
      PROSE[(turn * 5 + 4) % PROSE.length],
      `Step ${turn + 1} of the plan is done; version 1.${turn}.0 was tagged at 2026-03-${String((turn % 28) + 1).padStart(2, '0')}.`,
    ].join('\n\n');
    messages.push({ role: 'user', content: user }, { role: 'assistant', content: assistant });
    size += user.length + assistant.length;
  }
  return { model: 'gpt-4o-mini', messages };
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
}

interface Timing {
  p50: number;
  p99: number;
}

function time(fn: () => unknown, runs = 300): Timing {
  for (let i = 0; i < 50; i++) fn();
  const samples: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    fn();
    samples.push(performance.now() - t0);
  }
  samples.sort((a, b) => a - b);
  return { p50: percentile(samples, 50), p99: percentile(samples, 99) };
}

const pct = (n: number): string => n.toFixed(3);
const row = (name: string, s: Score): string =>
  `| ${name.padEnd(26)} | ${String(s.tp + s.fn).padStart(4)} | ${pct(s.precision)} | ${pct(s.recall)} | ${pct(s.f1)} | ${String(s.fp).padStart(3)} | ${String(s.fn).padStart(3)} |`;

function report(file: string): void {
  const cases = parseCases(readFileSync(file, 'utf8'));
  const ev = evaluate(cases);
  console.log(`\n## ${file.replace(/^.*\/test\//, 'test/')} (${ev.cases} cases)\n`);
  console.log('| detector / entity          | pos  | prec  | recall | F1    | FP  | FN  |');
  console.log('|----------------------------|------|-------|--------|-------|-----|-----|');
  for (const [name, s] of Object.entries(ev.byDetector)) console.log(row(name, s));
  for (const [name, s] of Object.entries(ev.byCategory)) console.log(row(`  ${name}`, s));
  if (ev.mistakes.length > 0) {
    console.log('\nmisclassified:');
    for (const m of ev.mistakes)
      console.log(
        `  ${m.kind.toUpperCase()} ${m.id} ${m.guardrail} expected=[${m.expected}] got=[${m.predicted}]`,
      );
  }
}

/** `req` plus one new user message, different for each i: the next turn of the chat. */
export function nextTurn(req: ChatRequest, i: number): ChatRequest {
  const content = `Follow-up ${i}: ${PROSE[i % PROSE.length]} ${PROSE[(i * 7 + 3) % PROSE.length]}`;
  return { ...req, messages: [...req.messages, { role: 'user', content }] };
}

/** p50/p99 of scanning each next turn, with the memo already holding the history. */
function timeNextTurns(req: ChatRequest, policy: GuardrailPolicySpec | undefined, runs = 300): Timing {
  const scope = `eval-${Math.random()}`;
  scanRequest(req, policy, undefined, scope);
  const turns = Array.from({ length: runs + 50 }, (_, i) => nextTurn(req, i));
  let i = 0;
  return time(() => scanRequest(turns[i++] as ChatRequest, policy, undefined, scope), runs);
}

/** Median CPU milliseconds per call over batches: a loaded machine preempts wall time. */
function cpuPerCall(fn: () => unknown, batch = 10, batches = 30): number {
  for (let i = 0; i < batch * 3; i++) fn();
  const per: number[] = [];
  for (let b = 0; b < batches; b++) {
    const start = process.cpuUsage();
    for (let i = 0; i < batch; i++) fn();
    const used = process.cpuUsage(start);
    per.push((used.user + used.system) / 1000 / batch);
  }
  per.sort((a, b) => a - b);
  return per[batches >> 1] ?? 0;
}

const ms = (t: Timing): string => `p50 ${t.p50.toFixed(3)} ms, p99 ${t.p99.toFixed(3)} ms`;

function bench(): void {
  const req = benchConversation();
  const short = benchConversation(1000);
  const chars = req.messages.reduce((n, m) => n + (typeof m.content === 'string' ? m.content.length : 0), 0);
  const shortChars = short.messages.reduce(
    (n, m) => n + (typeof m.content === 'string' ? m.content.length : 0),
    0,
  );
  const text = req.messages.map((m) => (typeof m.content === 'string' ? m.content : '')).join('\n');
  const load = loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');
  console.log(
    `\n## timing: ${req.messages.length} messages, ${chars} chars (~${Math.round(chars / 4)} tokens); load average ${load} on ${availableParallelism()} cores\n`,
  );
  console.log(`scanRequest, all four checks, first sight: ${ms(time(() => scanRequest(req, ALL_ON)))}`);
  console.log(
    `  CPU time per scan (median of 30 batches of 10; less sensitive to load than wall time): ${cpuPerCall(() => scanRequest(req, ALL_ON)).toFixed(3)} ms`,
  );
  console.log(`scanRequest, default policy, first sight: ${ms(time(() => scanRequest(req, undefined)))}`);
  console.log(
    `scanRequest, all four checks, next turn (history remembered): ${ms(timeNextTurns(req, ALL_ON))}`,
  );
  console.log(
    `scanRequest, default policy, ${short.messages.length}-message ${shortChars}-char request, first sight: ${ms(time(() => scanRequest(short, undefined), 3000))}`,
  );
  console.log(
    `scanRequest, default policy, same system prompt and a new user message: ${ms(timeNextTurns({ ...short, messages: short.messages.slice(0, 1) }, undefined, 3000))}`,
  );
  for (const [name, fn] of [
    ['prompt-injection', detectInjection],
    ['toxicity', detectToxicity],
    ['pii', detectPii],
    ['secrets', detectSecrets],
  ] as const) {
    const t = time(() => fn(text));
    console.log(`  ${name.padEnd(16)} on the joined text: ${ms(t)}`);
  }
}

const r3 = (r: Rate): string => `${r.rate.toFixed(3)} (${r.hit}/${r.of})`;

/** The headline table: one line per detector and split. */
function judgement(): void {
  console.log('\n## guardrails on their evaluation splits (default threshold 0.5)\n');
  console.log('| detector | split | recall | precision | FP on benign look-alikes | FP on all benign | F2 |');
  console.log('|---|---|---|---|---|---|---|');
  const details: string[] = [];
  for (const split of ['dev', 'test'] as Split[]) {
    const learned = evaluateSplit(learnedSplit(split));
    for (const name of ['prompt-injection', 'toxicity'] as const) {
      const f = learned[name];
      console.log(
        `| ${name} | ${split} | ${r3(f.recall)} | ${f.precision.toFixed(3)} | ${r3(f.fpLookalike)} | ${r3(f.fpAll)} | |`,
      );
      details.push(
        `${name} ${split}: ` +
          Object.entries(f.recallBy)
            .filter(([k]) => !k.startsWith('source:gantry:probes'))
            .map(([k, r]) => `${k} ${r.rate.toFixed(2)} (${r.of})`)
            .join(', '),
      );
    }
    const secrets = evaluateEntities(secretsSplit(split), 'secrets', detectSecrets, { anyCategory: true });
    console.log(
      `| secrets | ${split} | ${r3(secrets.recall)} | ${secrets.precision.toFixed(3)} | ${r3(secrets.falseAlarms)} | | ${secrets.f2.toFixed(3)} |`,
    );
    const missed = Object.entries(secrets.recallBy).filter(([, r]) => r.rate < 1);
    details.push(
      `secrets ${split}: ${Object.keys(secrets.recallBy).length} gitleaks rules with a sample; missed: ${missed.map(([k]) => k).join(', ') || 'none'}`,
    );
    const pii = evaluateEntities(piiSplit(split), 'pii', detectPii);
    console.log(
      `| pii | ${split} | ${r3(pii.recall)} | ${pii.precision.toFixed(3)} | ${r3(pii.falseAlarms)} | | ${pii.f2.toFixed(3)} |`,
    );
    details.push(
      `pii ${split}: ` +
        Object.entries(pii.recallBy)
          .map(([k, r]) => `${k} ${r.rate.toFixed(2)} (${r.of})`)
          .join(', '),
    );
  }
  console.log('\nrecall by kind, language and source:\n');
  for (const d of details) console.log(`- ${d}`);
}

/** The full guardrail report (npm run eval's guardrail part). */
export function printGuardrails(): void {
  // Timing first, before the evaluation sets fill the heap and their garbage is collected
  // in the middle of the timed scans.
  bench();
  judgement();
  for (const f of ['corpus.jsonl', 'holdout.jsonl', 'holdout2.jsonl'].map((name) => join(DATA, name)))
    report(f);
}

function main(): void {
  const files = process.argv.slice(2);
  if (files[0] === '--timing') {
    bench();
    return;
  }
  if (files.length > 0) {
    for (const f of files) report(f);
    return;
  }
  printGuardrails();
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) main();
