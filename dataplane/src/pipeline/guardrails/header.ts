/**
 * `x-gantry-guard` request header: absent or empty runs the policy's checks, `none` turns
 * them all off, a comma list runs only the named ones (still with the policy's actions).
 * An unknown name is reported so the route can answer 400 naming it.
 */
import { GuardrailNames, type GuardrailName } from './types.ts';

export type GuardSelection =
  | { kind: 'all' }
  | { kind: 'none' }
  | { kind: 'only'; names: Set<GuardrailName> }
  | { kind: 'invalid'; name: string };

const KNOWN: ReadonlySet<string> = new Set(GuardrailNames);

/**
 * The active checks (action other than `off`) a selection would not run: what a request
 * opts out of. Empty for `all`, and for a list naming every active check.
 */
export function skippedChecks(selection: GuardSelection, active: readonly GuardrailName[]): GuardrailName[] {
  switch (selection.kind) {
    case 'none':
      return [...active];
    case 'only':
      return active.filter((name) => !selection.names.has(name));
    default:
      return [];
  }
}

export function parseGuardHeader(value: string | undefined): GuardSelection {
  const raw = (value ?? '').trim().toLowerCase();
  if (raw === '' || raw === 'all') return { kind: 'all' };
  if (raw === 'none') return { kind: 'none' };
  const names = new Set<GuardrailName>();
  for (const part of raw.split(',')) {
    const name = part.trim();
    if (name === '') continue;
    if (!KNOWN.has(name)) return { kind: 'invalid', name };
    names.add(name as GuardrailName);
  }
  return names.size === 0 ? { kind: 'invalid', name: raw } : { kind: 'only', names };
}
