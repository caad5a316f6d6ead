/**
 * Who owns each A2A task and context: the tenant and key whose call the agent answered with
 * it. A later message naming a task or context is let through only for its owner; any other
 * caller (and an id no agent answer ever gave) is told the task does not exist. Kept in the
 * owned-object store (Redis when configured, so every pod knows), for a week.
 */
import type { Owner, OwnedStore } from '../../stores/owned/types.ts';

export type A2aThing = 'task' | 'context';

export const A2A_ID_TTL_MS = 7 * 24 * 60 * 60 * 1000;

/** NUL cannot occur in agent (model) names. */
const idOf = (agent: string, thing: A2aThing, id: string): string => `${agent}\u0000${thing}\u0000${id}`;

export class A2aOwnership {
  constructor(private readonly store: OwnedStore<true>) {}

  claim(agent: string, thing: A2aThing, id: string, owner: Owner): Promise<void> {
    return this.store.put(owner, idOf(agent, thing, id), true);
  }

  async owns(agent: string, thing: A2aThing, id: string, owner: Owner): Promise<boolean> {
    return (await this.store.get(owner, idOf(agent, thing, id))) === true;
  }
}
