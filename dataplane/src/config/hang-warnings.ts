/**
 * Deployments whose hangs cannot count against them. A timeout counts against a deployment
 * only when its own limit fired (router/policy.ts `cutByDeadline`): a request's deadline that
 * fires first says as much about the caller (a long `max_tokens`, a large prompt) as about the
 * deployment, and counting it let three slow-but-correct requests eject a healthy one. The
 * price is here: a deployment whose `timeoutMs` is not below the request timeout never has its
 * own limit fire on a non-streaming call, so it is never ejected for hanging. Said at load.
 */
import type { Snapshot } from './snapshot.ts';

/** One warning per such deployment, naming it and both limits. */
export function uncountedHangWarnings(
  snapshot: Pick<Snapshot, 'models'>,
  requestTimeoutMs: number,
): string[] {
  const warnings: string[] = [];
  const seen = new Set<string>();
  for (const d of [...snapshot.models.values()].flatMap((m) => m.deployments)) {
    if (seen.has(d.name) || d.timeouts.totalMs < requestTimeoutMs) continue;
    seen.add(d.name);
    warnings.push(
      `ModelDeployment ${d.name}: timeoutMs ${d.timeouts.totalMs} is not below the request timeout ` +
        `(${requestTimeoutMs} ms), so the request's deadline always fires first and its hangs cannot ` +
        `count against it (it is never ejected for hanging); set timeoutMs below the request timeout`,
    );
  }
  return warnings;
}
