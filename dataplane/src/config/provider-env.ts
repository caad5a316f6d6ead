/**
 * In a cluster, whoever may write a ModelDeployment chooses its baseUrl, and `apiKeyEnv` sends
 * the named variable of the data-plane pod there. The pod's environment holds more than
 * provider keys (KUBERNETES_*, cloud credentials a platform injects, the chart's GANTRY_*
 * settings), so a snapshot compiles against only the variables GANTRY_PROVIDER_ENV lists; the
 * chart renders that list from its `providerEnv` value into the data plane and the operator
 * alike, so the operator reports what the pods will refuse.
 */
import { isGatewaySetting } from './compile.ts';

export const PROVIDER_ENV_VAR = 'GANTRY_PROVIDER_ENV';

const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** The listed names (comma- or space-separated); a bad or GANTRY_* name is a start-up error. */
export function providerEnvNames(value: string | undefined): string[] {
  const names = (value ?? '').split(/[\s,]+/).filter((n) => n !== '');
  const bad = names.filter((n) => !NAME.test(n) || isGatewaySetting(n));
  if (bad.length > 0)
    throw new Error(
      `${PROVIDER_ENV_VAR}: ${bad.join(', ')}: each entry must be an environment variable name, and not a GANTRY_* one`,
    );
  return [...new Set(names)];
}

/** The part of `env` a published snapshot's ModelDeployments may name with apiKeyEnv. */
export function providerEnvOnly(
  env: Readonly<Record<string, string | undefined>>,
): Record<string, string | undefined> {
  const out: Record<string, string | undefined> = {};
  for (const name of providerEnvNames(env[PROVIDER_ENV_VAR]))
    if (Object.hasOwn(env, name)) out[name] = env[name];
  return out;
}
