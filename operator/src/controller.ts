/**
 * The operator's glue: informers feed a work queue; the leader reconciles the namespace as a
 * whole (the plan is pure), then generates missing keys, publishes the snapshot Secret and
 * writes each object's Ready condition where it changed. Standbys keep warm caches and write
 * nothing.
 */
import { randomBytes } from 'node:crypto';
import type { V1Secret } from '@kubernetes/client-node';
import { FIELD_MANAGER, GROUP, VERSION, apiErrorText, statusOf, type KubeClient } from './kube/client.ts';
import { Informers } from './kube/informers.ts';
import type { HealthFacts } from './health/verdict.ts';
import { LeaderElector } from './leader.ts';
import {
  MAX_SNAPSHOT_BYTES,
  plan,
  readPublished,
  snapshotSecretData,
  snapshotText,
  withGenerationFailures,
  type KeyToGenerate,
  type Plan,
  type ReadyVerdict,
} from './plan/plan.ts';
import { PlanMemo, type PlanWork } from './plan/memo.ts';
import type { SpendReporter } from './spend/reporter.ts';
import { WorkQueue } from './runtime/queue.ts';
import type { Condition, ObservedObject } from './world.ts';

export interface ControllerLog {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

export interface ControllerOptions {
  kube: KubeClient;
  identity: string;
  log: ControllerLog;
  snapshotSecret?: string;
  /** The variables the data-plane pods offer to apiKeyEnv (GANTRY_PROVIDER_ENV); default none. */
  providerEnv?: readonly string[];
  /** The most one object may publish, in bytes of plain JSON; default MAX_OBJECT_BYTES (256 KiB). */
  maxObjectBytes?: number;
  leaseName?: string;
  leaseDurationSeconds?: number;
  /** Level-triggered safety net: reconcile even when no event arrived. */
  resyncMs?: number;
  /** Copies spend from the shared store into ApiKey status (needs Redis). */
  spend?: SpendReporter | undefined;
  spendIntervalMs?: number;
}

const WORLD = 'world';
const HASH_ANNOTATION = 'gantry.dev/snapshot-hash';
const VERSION_ANNOTATION = 'gantry.dev/snapshot-version';

export class Controller {
  private readonly queue = new WorkQueue({ baseDelayMs: 200, maxDelayMs: 30_000 });
  private readonly informers: Informers;
  private readonly leader: LeaderElector;
  /** This operator's own: what its plans remember of the previous ones. */
  private readonly memo = new PlanMemo();
  private resync: NodeJS.Timeout | undefined;
  private worker: Promise<void> | undefined;
  /** Resolves after each reconcile; tests and readiness wait on it. */
  lastPlan: Plan | undefined;
  publishedVersion = 0;
  private syncedAt: number | undefined;
  private reconcilingSince: number | undefined;
  private running = false;

  constructor(private readonly opts: ControllerOptions) {
    this.informers = new Informers(opts.kube, () => this.queue.add(WORLD), opts.log);
    this.leader = new LeaderElector({
      kube: opts.kube,
      name: opts.leaseName ?? 'gantry-operator',
      identity: opts.identity,
      leaseDurationSeconds: opts.leaseDurationSeconds ?? 15,
      onElected: () => {
        opts.log.info({ identity: opts.identity }, 'became leader');
        this.queue.add(WORLD);
      },
      onDeposed: () => opts.log.warn({ identity: opts.identity }, 'lost leadership; writing stops'),
      log: opts.log,
    });
  }

  async start(): Promise<void> {
    this.running = true;
    await this.informers.start();
    this.syncedAt = Date.now();
    this.leader.start();
    const resyncMs = Math.min(
      this.opts.resyncMs ?? 60_000,
      this.opts.spend ? (this.opts.spendIntervalMs ?? 30_000) : Infinity,
    );
    this.resync = setInterval(() => this.queue.add(WORLD), resyncMs);
    this.resync.unref();
    this.worker = this.work();
  }

  isLeader(): boolean {
    return this.leader.isLeader();
  }

  /** How much of its planning work this operator computed rather than remembered. */
  planWork(): Readonly<PlanWork> {
    return this.memo.work();
  }

  /** What the probes decide on (health/verdict.ts). */
  healthFacts(): Omit<HealthFacts, 'now'> {
    return { syncedAt: this.syncedAt, reconcilingSince: this.reconcilingSince, running: this.running };
  }

  private async work(): Promise<void> {
    for (;;) {
      const key = await this.queue.take();
      if (key === undefined) return;
      try {
        if (this.leader.isLeader()) {
          this.reconcilingSince = Date.now();
          await this.reconcile();
        }
        this.queue.done(key);
      } catch (err) {
        this.opts.log.error({ err: (err as Error).message }, 'reconcile failed; retrying with backoff');
        this.queue.done(key, true);
      } finally {
        this.reconcilingSince = undefined;
      }
    }
  }

  private async reconcile(): Promise<void> {
    const objects = this.informers.objects();
    const snapshot = this.informers.rawSecret(this.snapshotName());
    const p = plan(
      {
        namespace: this.opts.kube.namespace,
        objects,
        secrets: this.informers.secretData(),
        secretLabels: this.informers.secretLabels(),
        snapshotSecret: this.snapshotName(),
        providerEnv: new Set(this.opts.providerEnv ?? []),
        maxObjectBytes: this.opts.maxObjectBytes,
        generatedKeys: this.informers.generatedKeys(FIELD_MANAGER),
        // Read only when the plan is over the limit, and once per version of the Secret.
        published: () =>
          snapshot?.resourceVersion === undefined
            ? readPublished(snapshot?.data)
            : this.memo.published(snapshot.resourceVersion, () => readPublished(snapshot.data)),
      },
      this.memo,
    );
    this.lastPlan = p;
    // One ApiKey whose Secret cannot be created must not stop the publish and every condition.
    let failed: unknown;
    const generationFailures = new Map<string, string>();
    for (const g of p.generate)
      await this.generateKey(g).catch((err: unknown) => {
        this.opts.log.error(
          { apiKey: g.apiKey.name, secret: g.secretName, err: (err as Error).message },
          'key generation failed',
        );
        generationFailures.set(g.apiKey.name, apiErrorText(err));
        failed ??= err;
      });
    if (p.tooLarge)
      this.opts.log.error(
        { bytes: p.tooLarge.bytes, limit: MAX_SNAPSHOT_BYTES, leftOut: p.tooLarge.leftOut },
        'snapshot too large for its Secret; the newest changes are left out (Ready=False SnapshotTooLarge)',
      );
    await this.publish(p);
    const observed = new Map(objects.map((o) => [`${o.kind}/${o.metadata.name}`, o]));
    const verdicts = withGenerationFailures(p.verdicts, generationFailures);
    // One object's refused status write must not leave every condition after it unwritten.
    for (const v of verdicts) {
      const o = observed.get(`${v.kind}/${v.name}`);
      if (o)
        await this.writeCondition(o, v).catch((err: unknown) => {
          this.opts.log.error(
            { kind: v.kind, name: v.name, err: (err as Error).message },
            'status write failed',
          );
          failed ??= err;
        });
    }
    // Spend still reaches ApiKey status while some other write keeps failing.
    await this.opts.spend?.maybeReport(p.manifests, observed);
    if (failed !== undefined) throw failed;
  }

  /** A strong random key, stored only in the Secret the ApiKey names (and owned by it). */
  private async generateKey(g: KeyToGenerate): Promise<void> {
    const secret: V1Secret = {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: {
        name: g.secretName,
        namespace: this.opts.kube.namespace,
        labels: { 'app.kubernetes.io/managed-by': FIELD_MANAGER },
        ownerReferences: [
          {
            apiVersion: `${GROUP}/${VERSION}`,
            kind: 'ApiKey',
            name: g.apiKey.name,
            uid: g.apiKey.uid,
            controller: true,
          },
        ],
      },
      type: 'Opaque',
      stringData: { [g.dataKey]: `sk-gantry-${randomBytes(32).toString('base64url')}` },
    };
    try {
      await this.opts.kube.writeSecret(secret);
      this.opts.log.info({ apiKey: g.apiKey.name, secret: g.secretName }, 'generated a key');
    } catch (err) {
      // Someone created it meanwhile: the next reconcile reads it.
      if (statusOf(err) !== 409) throw err;
    }
  }

  private snapshotName(): string {
    return this.opts.snapshotSecret ?? 'gantry-snapshot';
  }

  private async publish(p: Plan): Promise<void> {
    const name = this.snapshotName();
    const current = await this.opts.kube.readSecret(name);
    const annotations = current?.metadata?.annotations ?? {};
    const currentVersion = Number(annotations[VERSION_ANNOTATION] ?? 0) || 0;
    this.publishedVersion = currentVersion;
    if (annotations[HASH_ANNOTATION] === p.hash) return;
    const version = currentVersion + 1;
    await this.opts.kube.writeSecret({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: {
        name,
        namespace: this.opts.kube.namespace,
        resourceVersion: current?.metadata?.resourceVersion,
        labels: { 'app.kubernetes.io/managed-by': FIELD_MANAGER, 'app.kubernetes.io/part-of': 'gantry' },
        annotations: { [HASH_ANNOTATION]: p.hash, [VERSION_ANNOTATION]: String(version) },
      },
      type: 'Opaque',
      data: snapshotSecretData(snapshotText(p, version)),
    });
    this.publishedVersion = version;
    this.opts.log.info({ version, hash: p.hash, objects: p.manifests.length }, 'snapshot published');
  }

  private async writeCondition(o: ObservedObject, v: ReadyVerdict): Promise<void> {
    const status = v.ready ? 'True' : 'False';
    const old = o.status?.conditions?.find((c) => c.type === 'Ready');
    if (
      old &&
      old.status === status &&
      old.reason === v.reason &&
      old.message === v.message &&
      old.observedGeneration === v.generation
    )
      return;
    const condition: Condition = {
      type: 'Ready',
      status,
      reason: v.reason,
      message: v.message,
      observedGeneration: v.generation,
      lastTransitionTime:
        old && old.status === status && old.lastTransitionTime
          ? old.lastTransitionTime
          : new Date().toISOString(),
    };
    try {
      await this.opts.kube.patchStatus(v.kind, v.name, { conditions: [condition] });
    } catch (err) {
      // Deleted meanwhile: nothing to report on.
      if (statusOf(err) !== 404) throw err;
    }
  }

  /** Stop as a crashed process would: no Lease release (tests of the handover). */
  async kill(): Promise<void> {
    this.leader.abandon();
    await this.stop();
  }

  async stop(): Promise<void> {
    this.running = false;
    clearInterval(this.resync);
    this.queue.shutDown();
    await this.worker;
    await this.leader.stop();
    await this.informers.stop();
    await this.opts.spend?.close();
  }
}
