/**
 * Which cores the gateway under test and everything else run on. The gateway (Gantry or
 * the peer) gets a core of its own; the fake upstream and this process (the load
 * generator) share the rest, so the gateway never competes with the load it serves.
 */
import { spawnSync } from 'node:child_process';

export interface CpuPlan {
  pinned: boolean;
  /** Why, in one line, for the report. */
  description: string;
  /** `taskset -c` lists; undefined when not pinning. */
  gatewayCores?: string;
  otherCores?: string;
}

/** Parses `taskset -cp` output ("pid 1's current affinity list: 0-3,6") into core ids. */
export function parseAffinityList(text: string): number[] {
  const list = /list:\s*([\d,\s-]+)/.exec(text)?.[1] ?? '';
  const cores: number[] = [];
  for (const part of list.split(',').map((p) => p.trim())) {
    if (part === '') continue;
    const [from, to] = part.split('-').map(Number);
    if (from === undefined || Number.isNaN(from)) continue;
    for (let c = from; c <= (to ?? from); c++) cores.push(c);
  }
  return cores;
}

/** A pure decision, given the cores this process may use and whether taskset exists. */
export function planFor(cores: number[], hasTaskset: boolean): CpuPlan {
  if (!hasTaskset) return { pinned: false, description: 'not pinned: taskset is not installed' };
  if (cores.length < 2)
    return { pinned: false, description: `not pinned: only ${cores.length} core available` };
  const [gateway, ...rest] = cores;
  const gatewayCores = String(gateway);
  const otherCores = rest.join(',');
  return {
    pinned: true,
    description: `pinned: gateway on core ${gatewayCores}; fake upstream and load generator on core ${otherCores}`,
    gatewayCores,
    otherCores,
  };
}

/** Works out the plan and moves this process (all its threads) onto the non-gateway cores. */
export function pinCpus(): CpuPlan {
  const probe = spawnSync('taskset', ['-cp', String(process.pid)], { encoding: 'utf8' });
  if (probe.error || probe.status !== 0) return planFor([], false);
  const plan = planFor(parseAffinityList(probe.stdout), true);
  if (!plan.pinned || plan.otherCores === undefined) return plan;
  const self = spawnSync('taskset', ['-a', '-cp', plan.otherCores, String(process.pid)], {
    encoding: 'utf8',
  });
  if (self.status !== 0) {
    return {
      ...plan,
      description: `${plan.description} (could not pin the load generator: ${self.stderr.trim()})`,
    };
  }
  return plan;
}
