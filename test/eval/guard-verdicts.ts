/**
 * Every detector's findings (category, score, span) on every guardrail evaluation text,
 * one JSON line per text, then the verdicts of scanRequest on the timing conversations.
 * For proving that a speed change leaves verdicts alone: run it on two checkouts and
 * compare the outputs.
 *
 *   npx tsx test/eval/guard-verdicts.ts > /tmp/after.jsonl
 *   (in the other checkout) npx tsx test/eval/guard-verdicts.ts > /tmp/before.jsonl
 *   diff /tmp/before.jsonl /tmp/after.jsonl
 *
 * guard-verdicts.test.ts checks a digest of this output, so a change that moves any
 * finding fails there; one that is meant to updates the digest.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { detect as detectInjection } from '../../dataplane/src/pipeline/guardrails/injection.ts';
import { detect as detectPii } from '../../dataplane/src/pipeline/guardrails/pii.ts';
import { scanRequest } from '../../dataplane/src/pipeline/guardrails/scan.ts';
import { detect as detectSecrets } from '../../dataplane/src/pipeline/guardrails/secrets.ts';
import { detect as detectToxicity } from '../../dataplane/src/pipeline/guardrails/toxicity.ts';
import type { Finding } from '../../dataplane/src/pipeline/guardrails/types.ts';
import { DATA } from './guard-splits.ts';
import { ALL_ON, benchConversation } from './guardrails-eval.ts';

const FILES = [
  'corpus.jsonl',
  'holdout.jsonl',
  'holdout2.jsonl',
  'learned/dev.jsonl',
  'learned/test.jsonl',
  'pii/dev.jsonl',
  'pii/test.jsonl',
  'secrets/samples.jsonl',
  'secrets/test.jsonl',
  'secrets/benign-dev.jsonl',
  'secrets/benign-test.jsonl',
];

const show = (fs: Finding[]): string =>
  fs.map((f) => `${f.category}:${f.score.toFixed(6)}:${f.start}-${f.end}`).join(',');

export function* verdictLines(): Generator<string> {
  const probes = readdirSync(join(DATA, 'probes')).map((f) => `probes/${f}`);
  for (const file of [...FILES, ...probes.sort()]) {
    for (const line of readFileSync(join(DATA, file), 'utf8').split('\n')) {
      if (line.trim() === '') continue;
      const { id, text } = JSON.parse(line) as { id: string; text: string };
      yield JSON.stringify({
        file,
        id,
        injection: show(detectInjection(text)),
        toxicity: show(detectToxicity(text)),
        pii: show(detectPii(text)),
        secrets: show(detectSecrets(text)),
      });
    }
  }
  for (const chars of [1000, 80_000]) {
    const req = benchConversation(chars);
    yield JSON.stringify({
      conversation: chars,
      allOn: scanRequest(req, ALL_ON),
      defaults: scanRequest(req, undefined),
    });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href)
  for (const line of verdictLines()) process.stdout.write(`${line}\n`);
