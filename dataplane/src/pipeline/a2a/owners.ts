/**
 * Who owns each A2A task and context Gantry has seen an agent create: the tenant and key
 * whose call created it. A later call naming a task or context is let through only for its
 * owner; any other caller is told the task does not exist, as for an id never seen. In
 * process, bounded (oldest forgotten first) and aged out; with several replicas a task is
 * known only to the pod that created it, so such callers should keep to one pod (or accept
 * "task not found" from another) until a shared store backs this.
 */
export interface A2aOwner {
  tenant: string;
  keyId: string;
}

export type A2aThing = 'task' | 'context';

export const DEFAULT_MAX_A2A_IDS = 200_000;
export const DEFAULT_A2A_ID_TTL_MS = 7 * 24 * 60 * 60 * 1000;

export class A2aOwnership {
  private readonly owners = new Map<string, { owner: string; expiresAt: number }>();

  constructor(
    private readonly maxIds = DEFAULT_MAX_A2A_IDS,
    private readonly ttlMs = DEFAULT_A2A_ID_TTL_MS,
    private readonly now: () => number = Date.now,
  ) {}

  private static key(agent: string, thing: A2aThing, id: string): string {
    return `${agent}\u0000${thing}\u0000${id}`;
  }

  private static ownerKey(o: A2aOwner): string {
    return `${o.tenant}\u0000${o.keyId}`;
  }

  /** Records `owner` for an id the agent answered with, unless someone else already owns it. */
  claim(agent: string, thing: A2aThing, id: string, owner: A2aOwner): void {
    const key = A2aOwnership.key(agent, thing, id);
    const held = this.owners.get(key);
    if (held && held.expiresAt > this.now()) return;
    this.owners.delete(key);
    this.owners.set(key, { owner: A2aOwnership.ownerKey(owner), expiresAt: this.now() + this.ttlMs });
    while (this.owners.size > this.maxIds) {
      const oldest = this.owners.keys().next();
      if (oldest.done) break;
      this.owners.delete(oldest.value);
    }
  }

  /** True when some caller (any) created this id and it has not aged out. */
  known(agent: string, thing: A2aThing, id: string): boolean {
    const held = this.owners.get(A2aOwnership.key(agent, thing, id));
    return held !== undefined && held.expiresAt > this.now();
  }

  /** True only when `owner` created this id (ids never seen are nobody's). */
  owns(agent: string, thing: A2aThing, id: string, owner: A2aOwner): boolean {
    const held = this.owners.get(A2aOwnership.key(agent, thing, id));
    return held !== undefined && held.expiresAt > this.now() && held.owner === A2aOwnership.ownerKey(owner);
  }
}
