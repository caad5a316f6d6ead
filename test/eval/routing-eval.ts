/**
 * Difficulty-routing evaluation: `npx tsx test/eval/routing-eval.ts [file] [--misses]`.
 * Prints the confusion matrix, precision and recall per level, accuracy, the count of
 * complex prompts classified trivial, and classification time, including for a synthetic
 * 20k-token conversation (the classifier must stay far below a millisecond there too).
 */
import { dirname, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import type { ChatMessage } from '../../dataplane/src/formats/openai/types.ts';
import { classifyDifficulty } from '../../dataplane/src/pipeline/routing/classify.ts';
import { evaluate, formatEvaluation, loadLabelled } from '../../dataplane/src/pipeline/routing/evaluate.ts';

const here = dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
const showMisses = args.includes('--misses');
const file = args.find((a) => !a.startsWith('--')) ?? resolve(here, '../data/routing/labelled.jsonl');

const prompts = loadLabelled(file);
const result = evaluate(prompts);
console.log(`file: ${file}`);
console.log(formatEvaluation(result));

if (showMisses) {
  console.log('\nmisclassified:');
  for (const m of result.misses) {
    const users = prompts.find((p) => p.id === m.id)?.messages.filter((x) => x.role === 'user') ?? [];
    const last = users[users.length - 1];
    const text = typeof last?.content === 'string' ? last.content.replace(/\s+/g, ' ').slice(0, 90) : '';
    console.log(`  ${m.id}: labelled ${m.expected}, got ${m.got.level} (${m.got.score}) "${text}"`);
    console.log(`      ${m.got.reasons.join('; ')}`);
  }
}

/** About 20k tokens: 60 turns of ~1,300 characters each, then a short final question. */
function longConversation(): ChatMessage[] {
  const para =
    'The deployment pipeline builds each service, runs the integration suite against a fresh database, ' +
    'and promotes the image when the canary error rate stays below the threshold for ten minutes. ';
  const messages: ChatMessage[] = [{ role: 'system', content: 'You are a senior engineer helping a team.' }];
  for (let i = 0; i < 30; i++) {
    messages.push({ role: 'user', content: `Turn ${i}: ${para.repeat(6)}` });
    messages.push({ role: 'assistant', content: para.repeat(7) });
  }
  messages.push({
    role: 'user',
    content: 'Given all that, why did the canary in step 3 pass even though latency rose?',
  });
  return messages;
}

const convo = longConversation();
const chars = convo.reduce((s, m) => s + (typeof m.content === 'string' ? m.content.length : 0), 0);
const times: number[] = [];
for (let i = 0; i < 2000; i++) {
  const start = performance.now();
  classifyDifficulty({ model: 'eval', messages: convo });
  times.push(performance.now() - start);
}
times.sort((a, b) => a - b);
const at = (p: number): string => (times[Math.floor((p / 100) * (times.length - 1))] ?? 0).toFixed(3);
console.log(
  `20k-token conversation (${convo.length} messages, ${chars} chars): p50 ${at(50)} ms, p99 ${at(99)} ms`,
);
