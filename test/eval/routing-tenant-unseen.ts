/**
 * The one-shot look (issue 13): the frozen per-tenant learner (TENANT_CONFIG, chosen by
 * routing-tenant-tune.ts on seen domains only) on domains nothing in it was chosen on: the two
 * fresh unseen files, and Arena-Bench-V1 (scored three times before for the shipped model, never
 * by a tenant tuner). Each domain is one tenant; the same simulation and table as the tuner.
 *
 *   nice -n 19 npx tsx test/eval/routing-tenant-unseen.ts
 *
 * Verdict rule, fixed before the first run: online calibration reaches the target on a domain
 * after N labels when both the reported shuffle and the mean of ten further shuffles rank the
 * rest at AUC >= 0.65; it succeeds on new domains if that holds on both fresh files. Every run
 * of this file is a look at unseen data: record it in test/data/routing/outcomes/UNSEEN.md.
 */
import { fileURLToPath } from 'node:url';
import { loadOutcomes } from './routing-outcomes.ts';
import { TENANT_CONFIG } from './routing-tenant-learner.ts';
import { domainCells, TABLE_HEAD, tableRows, tenantRows } from './routing-tenant-sim.ts';

const TARGET = 0.65;
const UNSEEN_TENANTS = [
  { file: 'commonsenseqa.jsonl', name: 'CommonsenseQA (fresh)' },
  { file: 'challenge300.jsonl', name: 'Challenge300 (fresh)' },
  { file: 'arena-bench.jsonl', name: 'Arena-Bench-V1 (unseen for tenants)' },
] as const;

function main(): void {
  console.log(`frozen config: ${JSON.stringify(TENANT_CONFIG)}`);
  console.log(TABLE_HEAD.join('\n'));
  const verdicts: string[] = [];
  for (const t of UNSEEN_TENANTS) {
    const cells = domainCells(tenantRows(loadOutcomes(t.file)), TENANT_CONFIG, 10);
    for (const line of tableRows(t.name, cells)) console.log(line);
    const first = cells.find((c) => c.tenant >= TARGET && c.meanTenant >= TARGET);
    verdicts.push(
      `${t.name}: ${first ? `AUC >= ${TARGET} from N = ${first.n}` : `below ${TARGET} at every N`}`,
    );
  }
  console.log(verdicts.join('\n'));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) main();
