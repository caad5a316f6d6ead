/**
 * Leader election on a coordination.k8s.io Lease, decided by a pure function: the shell
 * reads the Lease, asks what to do, and writes with the Lease's resourceVersion, so two
 * replicas racing for an expired Lease cannot both win (the loser gets a 409).
 */
export interface LeaseRecord {
  holderIdentity: string | undefined;
  /** epoch ms of the holder's last renewal */
  renewTime: number | undefined;
  leaseDurationSeconds: number | undefined;
  leaseTransitions: number;
}

export type LeaseAction =
  | { kind: 'create' }
  | { kind: 'renew' }
  | { kind: 'acquire'; transitions: number }
  | { kind: 'wait'; holder: string; expiresAt: number };

export function decideLease(lease: LeaseRecord | undefined, me: string, now: number): LeaseAction {
  if (!lease) return { kind: 'create' };
  if (lease.holderIdentity === me) return { kind: 'renew' };
  if (lease.renewTime === undefined) return { kind: 'acquire', transitions: lease.leaseTransitions + 1 };
  const expiresAt = lease.renewTime + (lease.leaseDurationSeconds ?? 0) * 1000;
  if (lease.holderIdentity && now < expiresAt)
    return { kind: 'wait', holder: lease.holderIdentity, expiresAt };
  return { kind: 'acquire', transitions: lease.leaseTransitions + 1 };
}
