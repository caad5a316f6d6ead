/**
 * One tenant's request log in process, packed: the newest `limit` usage records in a ring of
 * typed-array columns instead of one object graph per record. A record object with its id,
 * model string, numbers and summaries cost ~0.5-0.8 KB of heap, and each one outlived many
 * young-generation collections, so all of it was promoted and then held: 10,000 records per
 * tenant were ~5-8 MB of the gateway's live heap, which V8 multiplies by its growth factor
 * (up to 4) before it next collects. Packed, a record is ~85 bytes: 8 numbers, a flag byte,
 * its request id as 16 bytes, and one number standing for its strings and summaries, which
 * are kept once per distinct combination (`RefCountedInterner`). Reading unpacks a new
 * object equal to the one recorded.
 */
import type { CacheSummary, GuardrailVerdictSummary, UsageRecord } from '../../accounting/usage.ts';
import { RefCountedInterner } from './interner.ts';
import { packUuid, unpackUuid, UUID_BYTES } from './uuid-bytes.ts';

type Finding = GuardrailVerdictSummary['findings'][number];

/** A record's strings and summaries: what repeats from one request to the next. */
interface Dims {
  keyId: string;
  endpoint: UsageRecord['endpoint'];
  requestedModel: string;
  model: string;
  deployment: string | undefined;
  provider: UsageRecord['provider'];
  errorType: string | undefined;
  cacheBand: CacheSummary['band'] | undefined;
  guardrails: GuardrailVerdictSummary | undefined;
  routing: UsageRecord['routing'];
}

// Numbers of every record, in this order.
const AT = 0;
const STATUS = 1;
const ATTEMPTS = 2;
const PROMPT = 3;
const COMPLETION = 4;
const TOTAL = 5;
const COST = 6;
const LATENCY = 7;
const NUMS = 8;

// Numbers of the cache and compression summaries, in a second array made when first needed.
const CACHE_SCORE = 0;
const CACHE_TOKENS = 1;
const CACHE_SAVED = 2;
const CACHE_CREDITED = 3;
const CACHE_LATENCY = 4;
const COMP_RATIO = 5;
const COMP_ORIGINAL = 6;
const COMP_TOKENS = 7;
const COMP_SAVED = 8;
const EXTRAS = 9;

const EU = 1;
const STREAM = 2;
const CACHE = 4;
const CACHE_HAS_SCORE = 8;
const CACHE_HAS_EXACT = 16;
const CACHE_EXACT = 32;
const COMPRESSION = 64;
const PACKED_ID = 128;

/** First allocation; columns double up to `limit`, so a quiet tenant costs little. */
const INITIAL_CAPACITY = 64;

/** A finding as an array: its optional `action` is there (null for undefined) only when the key was. */
const findingTuple = (f: Finding): unknown[] =>
  'action' in f ? [f.guardrail, f.category, f.count, f.action ?? null] : [f.guardrail, f.category, f.count];

/**
 * The interning key of a record's strings and summaries: JSON, so no value can pass for a
 * separator (client-chosen model names may hold any character); undefined is null.
 */
function dimsKey(r: UsageRecord): string {
  const g = r.guardrails;
  const ro = r.routing;
  return JSON.stringify([
    r.keyId,
    r.endpoint,
    r.requestedModel,
    r.model,
    r.deployment ?? null,
    r.provider ?? null,
    r.errorType ?? null,
    r.cache?.band ?? null,
    g === undefined ? null : [g.action, g.findings.map(findingTuple)],
    ro === undefined ? null : [ro.level, ro.model, ro.effort ?? null],
  ]);
}

const copyGuardrails = (g: GuardrailVerdictSummary): GuardrailVerdictSummary => ({
  action: g.action,
  findings: g.findings.map((f) =>
    'action' in f
      ? { guardrail: f.guardrail, category: f.category, count: f.count, action: f.action }
      : { guardrail: f.guardrail, category: f.category, count: f.count },
  ),
});

const copyRouting = (ro: NonNullable<UsageRecord['routing']>): NonNullable<UsageRecord['routing']> => ({
  level: ro.level,
  model: ro.model,
  effort: ro.effort,
});

function dimsOf(r: UsageRecord): Dims {
  return {
    keyId: r.keyId,
    endpoint: r.endpoint,
    requestedModel: r.requestedModel,
    model: r.model,
    deployment: r.deployment,
    provider: r.provider,
    errorType: r.errorType,
    cacheBand: r.cache?.band,
    // Copies: the interner's value must not change with the caller's objects.
    guardrails: r.guardrails && copyGuardrails(r.guardrails),
    routing: r.routing && copyRouting(r.routing),
  };
}

export class PackedUsageLog {
  private cap = 0;
  /** Physical index of the oldest record. */
  private start = 0;
  private count = 0;
  private nums = new Float64Array(0);
  private extras: Float64Array | undefined;
  private flags = new Uint8Array(0);
  private dims = new Int32Array(0);
  private ids = new Uint8Array(0);
  /** Ids that are not lowercase UUIDs, by physical index (rare: ids given by a client, side calls). */
  private readonly otherIds = new Map<number, string>();
  private readonly interned = new RefCountedInterner<Dims>();
  /** The last record's interned slot and values, to skip the key when the next repeats them. */
  private lastDims: { slot: number; d: Dims } | undefined;

  constructor(
    readonly tenant: string,
    readonly limit: number,
  ) {
    if (!Number.isSafeInteger(limit) || limit < 1)
      throw new Error(`log limit must be a whole number above 0, got ${limit}`);
  }

  /** Records held (at most `limit`). */
  get size(): number {
    return this.count;
  }

  /** Distinct string-and-summary combinations held, for tests of the bound. */
  get distinctDims(): number {
    return this.interned.size;
  }

  /** Appends `r`; past `limit` records the oldest is dropped. `r` is copied, never kept. */
  push(r: UsageRecord): void {
    let p: number;
    if (this.count === this.limit) {
      p = this.start;
      this.drop(p);
      this.start = (this.start + 1) % this.cap;
    } else {
      if (this.count === this.cap) this.grow();
      p = (this.start + this.count) % this.cap;
      this.count++;
    }
    this.write(p, r);
  }

  /** `at` of the record `age` places from the newest (0 is the newest). */
  atMs(age: number): number {
    return this.nums[this.physical(age) * NUMS + AT]!;
  }

  /** A new object equal to the record `age` places from the newest (0 is the newest). */
  record(age: number): UsageRecord {
    const p = this.physical(age);
    const n = p * NUMS;
    const f = this.flags[p]!;
    const d = this.interned.get(this.dims[p]!);
    const x = p * EXTRAS;
    const e = this.extras;
    const cache: CacheSummary | undefined =
      f & CACHE && e
        ? {
            band: d.cacheBand!,
            score: f & CACHE_HAS_SCORE ? e[x + CACHE_SCORE]! : undefined,
            tokensSaved: e[x + CACHE_TOKENS]!,
            savedUsd: e[x + CACHE_SAVED]!,
            creditedUsd: e[x + CACHE_CREDITED]!,
            latencyMs: e[x + CACHE_LATENCY]!,
            ...(f & CACHE_HAS_EXACT && { exact: (f & CACHE_EXACT) !== 0 }),
          }
        : undefined;
    return {
      id: f & PACKED_ID ? unpackUuid(this.ids, p * UUID_BYTES) : this.otherIds.get(p)!,
      at: this.nums[n + AT]!,
      tenant: this.tenant,
      keyId: d.keyId,
      endpoint: d.endpoint,
      requestedModel: d.requestedModel,
      model: d.model,
      deployment: d.deployment,
      provider: d.provider,
      euResident: (f & EU) !== 0,
      status: this.nums[n + STATUS]!,
      errorType: d.errorType,
      stream: (f & STREAM) !== 0,
      attempts: this.nums[n + ATTEMPTS]!,
      promptTokens: this.nums[n + PROMPT]!,
      completionTokens: this.nums[n + COMPLETION]!,
      totalTokens: this.nums[n + TOTAL]!,
      costUsd: this.nums[n + COST]!,
      latencyMs: this.nums[n + LATENCY]!,
      cache,
      guardrails: d.guardrails && copyGuardrails(d.guardrails),
      compression:
        f & COMPRESSION && e
          ? {
              ratio: e[x + COMP_RATIO]!,
              originalTokens: e[x + COMP_ORIGINAL]!,
              tokens: e[x + COMP_TOKENS]!,
              savedUsd: e[x + COMP_SAVED]!,
            }
          : undefined,
      routing: d.routing && copyRouting(d.routing),
    };
  }

  private physical(age: number): number {
    if (!Number.isInteger(age) || age < 0 || age >= this.count) throw new RangeError(`no record ${age} back`);
    return (this.start + this.count - 1 - age) % this.cap;
  }

  private write(p: number, r: UsageRecord): void {
    const n = p * NUMS;
    const nums = this.nums;
    nums[n + AT] = r.at;
    nums[n + STATUS] = r.status;
    nums[n + ATTEMPTS] = r.attempts;
    nums[n + PROMPT] = r.promptTokens;
    nums[n + COMPLETION] = r.completionTokens;
    nums[n + TOTAL] = r.totalTokens;
    nums[n + COST] = r.costUsd;
    nums[n + LATENCY] = r.latencyMs;
    let f = (r.euResident ? EU : 0) | (r.stream ? STREAM : 0);
    if (packUuid(r.id, this.ids, p * UUID_BYTES)) f |= PACKED_ID;
    else this.otherIds.set(p, r.id);
    if (r.cache || r.compression) {
      const e = (this.extras ??= new Float64Array(this.cap * EXTRAS));
      const x = p * EXTRAS;
      if (r.cache) {
        const c = r.cache;
        f |= CACHE;
        if (c.score !== undefined) f |= CACHE_HAS_SCORE;
        if ('exact' in c) f |= CACHE_HAS_EXACT | (c.exact ? CACHE_EXACT : 0);
        e[x + CACHE_SCORE] = c.score ?? 0;
        e[x + CACHE_TOKENS] = c.tokensSaved;
        e[x + CACHE_SAVED] = c.savedUsd;
        e[x + CACHE_CREDITED] = c.creditedUsd;
        e[x + CACHE_LATENCY] = c.latencyMs;
      }
      if (r.compression) {
        const c = r.compression;
        f |= COMPRESSION;
        e[x + COMP_RATIO] = c.ratio;
        e[x + COMP_ORIGINAL] = c.originalTokens;
        e[x + COMP_TOKENS] = c.tokens;
        e[x + COMP_SAVED] = c.savedUsd;
      }
    }
    this.flags[p] = f;
    this.dims[p] = this.dimsSlot(r);
  }

  /**
   * The interned slot of `r`'s strings and summaries. A tenant's records mostly repeat the
   * previous one's, which is checked field by field before building the interning key.
   */
  private dimsSlot(r: UsageRecord): number {
    const last = this.lastDims;
    if (
      last !== undefined &&
      r.guardrails === undefined &&
      r.routing === undefined &&
      last.d.guardrails === undefined &&
      last.d.routing === undefined &&
      r.keyId === last.d.keyId &&
      r.endpoint === last.d.endpoint &&
      r.requestedModel === last.d.requestedModel &&
      r.model === last.d.model &&
      r.deployment === last.d.deployment &&
      r.provider === last.d.provider &&
      r.errorType === last.d.errorType &&
      r.cache?.band === last.d.cacheBand
    ) {
      this.interned.retain(last.slot);
      return last.slot;
    }
    const slot = this.interned.acquire(dimsKey(r), () => dimsOf(r));
    this.lastDims = { slot, d: this.interned.get(slot) };
    return slot;
  }

  /** Lets go of what the record at physical index `p` holds outside the columns. */
  private drop(p: number): void {
    const slot = this.dims[p]!;
    this.interned.release(slot);
    // A slot let go may be given to other values: the shortcut must not name it.
    if (this.lastDims?.slot === slot && !this.interned.holds(slot)) this.lastDims = undefined;
    if ((this.flags[p]! & PACKED_ID) === 0) this.otherIds.delete(p);
  }

  /**
   * Doubles the columns (up to `limit`). Only a log that is not yet full grows, and until it is
   * full its oldest record stays at index 0 (`start` moves only on a full log's push), so the
   * columns are copied as they are and every index, `otherIds`' too, stays valid.
   */
  private grow(): void {
    const cap = Math.min(this.limit, Math.max(INITIAL_CAPACITY, this.cap * 2));
    const nums = new Float64Array(cap * NUMS);
    nums.set(this.nums);
    this.nums = nums;
    if (this.extras) {
      const extras = new Float64Array(cap * EXTRAS);
      extras.set(this.extras);
      this.extras = extras;
    }
    const flags = new Uint8Array(cap);
    flags.set(this.flags);
    this.flags = flags;
    const dims = new Int32Array(cap);
    dims.set(this.dims);
    this.dims = dims;
    const ids = new Uint8Array(cap * UUID_BYTES);
    ids.set(this.ids);
    this.ids = ids;
    this.cap = cap;
  }
}
