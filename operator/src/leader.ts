/**
 * Lease-based leader election. The leader renews every third of the lease; it counts itself
 * leader only until its last successful renewal's lease would expire, so a partitioned
 * leader stops writing before a standby can take over. Stopping releases the Lease, so a
 * rolling update hands over at once.
 */
import type { V1Lease } from '@kubernetes/client-node';
import { statusOf, type KubeClient } from './kube/client.ts';
import { decideLease, type LeaseRecord } from './runtime/lease.ts';

export interface LeaderOptions {
  kube: KubeClient;
  name: string;
  identity: string;
  leaseDurationSeconds: number;
  onElected: () => void;
  onDeposed: () => void;
  log: { warn(obj: object, msg: string): void };
  now?: () => number;
}

export class LeaderElector {
  private leaderUntil = 0;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> = Promise.resolve();
  private stopped = false;
  private readonly now: () => number;

  constructor(private readonly opts: LeaderOptions) {
    this.now = opts.now ?? Date.now;
  }

  isLeader(): boolean {
    return this.now() < this.leaderUntil;
  }

  start(): void {
    const tick = () => {
      if (this.stopped) return;
      this.running = this.tryOnce()
        .catch((err: unknown) => this.opts.log.warn({ err: (err as Error).message }, 'lease update failed'))
        .finally(() => {
          if (!this.stopped) this.timer = setTimeout(tick, this.periodMs());
        });
    };
    tick();
  }

  private periodMs(): number {
    // Standbys poll as often as the leader renews, so a handover waits at most one period.
    return Math.max(200, Math.floor((this.opts.leaseDurationSeconds * 1000) / 3));
  }

  private async tryOnce(): Promise<void> {
    const wasLeader = this.isLeader();
    const lease = await this.opts.kube.readLease(this.opts.name);
    const startedAt = this.now();
    const action = decideLease(toRecord(lease), this.opts.identity, startedAt);
    if (action.kind === 'wait') {
      this.leaderUntil = 0;
      if (wasLeader) this.opts.onDeposed();
      return;
    }
    const iso = microTime(startedAt);
    const body: V1Lease = {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: {
        name: this.opts.name,
        namespace: this.opts.kube.namespace,
        resourceVersion: lease?.metadata?.resourceVersion,
      },
      spec: {
        holderIdentity: this.opts.identity,
        leaseDurationSeconds: this.opts.leaseDurationSeconds,
        renewTime: iso,
        acquireTime:
          action.kind === 'renew' && lease?.spec?.acquireTime
            ? microTime(new Date(lease.spec.acquireTime).getTime())
            : iso,
        leaseTransitions:
          action.kind === 'acquire' ? action.transitions : (lease?.spec?.leaseTransitions ?? 0),
      },
    };
    try {
      await this.opts.kube.writeLease(body);
    } catch (err) {
      // Another replica wrote first: it leads.
      if (statusOf(err) === 409) {
        this.leaderUntil = 0;
        if (wasLeader) this.opts.onDeposed();
        return;
      }
      throw err;
    }
    this.leaderUntil = startedAt + this.opts.leaseDurationSeconds * 1000;
    if (!wasLeader) this.opts.onElected();
  }

  /** Stop renewing without releasing the Lease, as a crashed replica would. */
  abandon(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    this.leaderUntil = 0;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
    if (!this.isLeader()) return;
    this.leaderUntil = 0;
    const lease = await this.opts.kube.readLease(this.opts.name).catch(() => undefined);
    if (lease?.spec?.holderIdentity !== this.opts.identity) return;
    const released: V1Lease = {
      ...lease,
      spec: {
        ...lease.spec,
        holderIdentity: undefined,
        renewTime: lease.spec.renewTime ? microTime(new Date(lease.spec.renewTime).getTime()) : undefined,
        acquireTime: lease.spec.acquireTime
          ? microTime(new Date(lease.spec.acquireTime).getTime())
          : undefined,
      },
    };
    await this.opts.kube.writeLease(released).catch(() => undefined);
  }
}

/**
 * Lease times are MicroTime: the apiserver refuses the milliseconds a Date serialises to
 * (".723Z" is not ".000000Z"), so the string goes through the client untouched.
 */
export function microTime(ms: number): Date {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z') as unknown as Date;
}

function toRecord(lease: V1Lease | undefined): LeaseRecord | undefined {
  if (!lease) return undefined;
  const renew = lease.spec?.renewTime;
  return {
    holderIdentity: lease.spec?.holderIdentity ?? undefined,
    renewTime: renew ? new Date(renew).getTime() : undefined,
    leaseDurationSeconds: lease.spec?.leaseDurationSeconds,
    leaseTransitions: lease.spec?.leaseTransitions ?? 0,
  };
}
