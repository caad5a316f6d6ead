/**
 * A process that opens a settlement journal and holds it until killed (lock.test.ts SIGKILLs
 * it to leave a lock nobody refreshes). Usage: tsx lock-holder.fixture.ts <dir>
 */
import { SettlementJournal } from './journal.ts';

const dir = process.argv[2];
if (!dir) throw new Error('usage: lock-holder.fixture.ts <dir>');
await SettlementJournal.open({ dir, apply: async () => undefined, lock: { staleMs: 2000, updateMs: 1000 } });
process.stdout.write(`locked ${process.pid}\n`);
// Held until killed: the lock's refresh timer is unref'd, so keep the process alive.
setInterval(() => undefined, 60_000);
