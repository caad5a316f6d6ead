/**
 * Store bounds from the environment: one variable per bound. Unset or blank variables keep the
 * store's default; a value that is not a whole positive number stops the start with a message
 * naming the variable (a typo must not silently mean "unbounded").
 */
export function positiveBoundsFromEnv<Field extends string>(
  variables: Readonly<Record<Field, string>>,
  env: Readonly<Record<string, string | undefined>>,
): Partial<Record<Field, number>> {
  const out: Partial<Record<Field, number>> = {};
  for (const [field, name] of Object.entries(variables) as [Field, string][]) {
    const raw = env[name];
    if (raw === undefined || raw.trim() === '') continue;
    const n = Number(raw);
    if (!Number.isSafeInteger(n) || n < 1)
      throw new Error(`${name} must be a whole number above 0, got ${raw}`);
    out[field] = n;
  }
  return out;
}
