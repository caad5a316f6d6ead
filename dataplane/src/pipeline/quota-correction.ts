/**
 * Which usage corrects which deployment quota window entry at settlement. Only deployments
 * with a quota hold tickets, so a stream continued across deployments has fewer tickets than
 * parts: the k-th ticket of a deployment goes with the k-th part that deployment answered,
 * never with the part at the ticket's index. Pure.
 */
import type { Usage } from '../formats/openai/types.ts';

export interface AnsweredPart {
  deployment: { name: string };
  /** Undefined when the provider reported none. */
  usage: Pick<Usage, 'prompt_tokens' | 'completion_tokens'> | undefined;
}

/** For each ticket in order, the tokens its deployment's matching part used, or undefined (keep the estimate). */
export function ticketTokens(
  tickets: readonly { deployment: string }[],
  parts: readonly AnsweredPart[],
): (number | undefined)[] {
  const used = new Map<string, number>();
  return tickets.map((t) => {
    const seen = used.get(t.deployment) ?? 0;
    used.set(t.deployment, seen + 1);
    const part = parts.filter((p) => p.deployment.name === t.deployment)[seen];
    return part?.usage ? part.usage.prompt_tokens + part.usage.completion_tokens : undefined;
  });
}
