/**
 * The vectors of one partition, in process.
 *
 * Up to EXACT_LIMIT live vectors a search scores every one (exact and, that small, cheap).
 * Above it, candidates come from multi-probe SimHash over the key — the leading
 * `hasher.dim` components, the query half of the cache's [q | c] — each vector sitting in
 * one bucket per table, a search visiting its own bucket and those one bit away. A cache hit
 * needs a DualScore of at least the TWEAK threshold, so its query cosine is at least
 * (tweak − beta) / alpha (0.786 by default): a near-duplicate question, which collides with
 * high probability. Candidates are ranked by sketch distance, and the best ones are scored
 * exactly over the whole vector, so returned scores are exact DualScores.
 *
 * Keying on the query alone matters: most conversations share a context (no history, the
 * same system prompt), and hashing the whole vector would put all of those in one bucket.
 *
 * A delete frees the slot at once (no tombstones, nothing to rebuild).
 */
import type { VectorHit } from '../types.ts';
import type { SimHash } from './simhash.ts';

/** Partitions up to this size are scanned exactly. */
export const EXACT_LIMIT = 256;
/** One-bit-off buckets probed per table, besides the probe's own. */
const PROBE_FLIPS = 4;
/** Candidates scored exactly: the best-ranked this many (at least 4·k)... */
const VERIFY = 32;
/** ...and those tied with the last of them, up to this many (many askings of one question). */
const VERIFY_TIES = 128;

export class Partition {
  readonly dim: number;
  private capacity = 0;
  private vectors = new Float32Array(0);
  private codes = new Uint16Array(0);
  private expires = new Float64Array(0);
  private visited = new Uint32Array(0);
  private epoch = 0;
  private ids: (string | undefined)[] = [];
  private free: number[] = [];
  private slotsUsed = 0;
  private readonly byId = new Map<string, number>();
  /** Bucket code → slots, per table; built once the partition outgrows exact scans. */
  private buckets: Map<number, number[]>[] | undefined;
  private readonly probeCodes: Uint16Array;
  private readonly probeMargins: Float64Array;
  private readonly flips = new Int32Array(PROBE_FLIPS);

  constructor(
    private readonly hasher: SimHash,
    dim: number,
  ) {
    if (hasher.dim > dim) throw new RangeError(`key of ${hasher.dim} dimensions in vectors of ${dim}`);
    this.dim = dim;
    this.probeCodes = new Uint16Array(hasher.tables);
    this.probeMargins = new Float64Array(hasher.tables * hasher.bits);
    this.grow(16);
  }

  get size(): number {
    return this.byId.size;
  }

  get memoryBytes(): number {
    const bucketed = this.buckets ? this.size * this.hasher.tables * 8 : 0;
    return (
      this.vectors.byteLength +
      this.codes.byteLength +
      this.expires.byteLength +
      this.visited.byteLength +
      bucketed
    );
  }

  private grow(capacity: number): void {
    const vectors = new Float32Array(capacity * this.dim);
    vectors.set(this.vectors);
    this.vectors = vectors;
    const codes = new Uint16Array(capacity * this.hasher.tables);
    codes.set(this.codes);
    this.codes = codes;
    const expires = new Float64Array(capacity);
    expires.set(this.expires);
    this.expires = expires;
    this.visited = new Uint32Array(capacity);
    this.epoch = 0;
    this.capacity = capacity;
  }

  has(id: string): boolean {
    return this.byId.has(id);
  }

  upsert(id: string, vector: Float32Array, expiresAt: number): void {
    if (vector.length !== this.dim)
      throw new RangeError(`vector has ${vector.length} dimensions, partition holds ${this.dim}`);
    this.delete(id);
    let slot = this.free.pop();
    if (slot === undefined) {
      if (this.slotsUsed === this.capacity) this.grow(this.capacity * 2);
      slot = this.slotsUsed++;
    }
    this.vectors.set(vector, slot * this.dim);
    this.hasher.hash(vector, this.codes, slot * this.hasher.tables);
    this.expires[slot] = expiresAt;
    this.ids[slot] = id;
    this.byId.set(id, slot);
    if (this.buckets) this.link(slot);
    else if (this.size > EXACT_LIMIT) this.buildBuckets();
  }

  delete(id: string): boolean {
    const slot = this.byId.get(id);
    if (slot === undefined) return false;
    if (this.buckets) this.unlink(slot);
    this.byId.delete(id);
    this.ids[slot] = undefined;
    this.free.push(slot);
    return true;
  }

  /** Ids whose expiry has passed (deleting is the caller's, who also keeps global bookkeeping). */
  expired(now: number): string[] {
    const out: string[] = [];
    for (const [id, slot] of this.byId) if ((this.expires[slot] as number) <= now) out.push(id);
    return out;
  }

  private buildBuckets(): void {
    this.buckets = Array.from({ length: this.hasher.tables }, () => new Map<number, number[]>());
    for (const slot of this.byId.values()) this.link(slot);
  }

  private link(slot: number): void {
    const tables = this.hasher.tables;
    for (let t = 0; t < tables; t++) {
      const map = this.buckets?.[t] as Map<number, number[]>;
      const code = this.codes[slot * tables + t] as number;
      const bucket = map.get(code);
      if (bucket) bucket.push(slot);
      else map.set(code, [slot]);
    }
  }

  private unlink(slot: number): void {
    const tables = this.hasher.tables;
    for (let t = 0; t < tables; t++) {
      const map = this.buckets?.[t] as Map<number, number[]>;
      const code = this.codes[slot * tables + t] as number;
      const bucket = map.get(code);
      if (!bucket) continue;
      const i = bucket.indexOf(slot);
      if (i < 0) continue;
      bucket[i] = bucket[bucket.length - 1] as number;
      bucket.pop();
      if (bucket.length === 0) map.delete(code);
    }
  }

  private score(q: Float32Array, slot: number): number {
    const v = this.vectors;
    const dim = this.dim;
    let o = slot * dim;
    let s0 = 0;
    let s1 = 0;
    let s2 = 0;
    let s3 = 0;
    let i = 0;
    for (; i + 3 < dim; i += 4, o += 4) {
      s0 += (q[i] as number) * (v[o] as number);
      s1 += (q[i + 1] as number) * (v[o + 1] as number);
      s2 += (q[i + 2] as number) * (v[o + 2] as number);
      s3 += (q[i + 3] as number) * (v[o + 3] as number);
    }
    for (; i < dim; i++, o++) s0 += (q[i] as number) * (v[o] as number);
    return s0 + s1 + s2 + s3;
  }

  private hit(slot: number, score: number): VectorHit {
    return { id: this.ids[slot] as string, score };
  }

  search(q: Float32Array, k: number, now: number): VectorHit[] {
    if (k <= 0 || this.size === 0) return [];
    if (q.length !== this.dim)
      throw new RangeError(`probe has ${q.length} dimensions, partition holds ${this.dim}`);
    const slots = this.buckets ? this.candidates(q, k, now) : this.liveSlots(now);
    const hits = slots.map((slot) => this.hit(slot, this.score(q, slot)));
    hits.sort((a, b) => b.score - a.score);
    return hits.slice(0, k);
  }

  private liveSlots(now: number): number[] {
    const out: number[] = [];
    for (const slot of this.byId.values()) if ((this.expires[slot] as number) > now) out.push(slot);
    return out;
  }

  /** Unexpired slots sharing a bucket (or one bit off) with the probe in any table, best few by sketch. */
  private candidates(q: Float32Array, k: number, now: number): number[] {
    const tables = this.hasher.tables;
    const bits = this.hasher.bits;
    const probe = this.probeCodes;
    const margins = this.probeMargins;
    this.hasher.hash(q, probe, 0, margins);
    if (++this.epoch === 0xffffffff) {
      this.visited.fill(0);
      this.epoch = 1;
    }
    const epoch = this.epoch;
    const found: number[] = [];
    const flips = this.flips;
    for (let t = 0; t < tables; t++) {
      const map = this.buckets?.[t] as Map<number, number[]>;
      const code = probe[t] as number;
      const nFlips = this.likelyFlips(margins, t * bits, bits, flips);
      for (let f = -1; f < nFlips; f++) {
        const bucket = map.get(f < 0 ? code : code ^ (1 << (flips[f] as number)));
        if (!bucket) continue;
        for (let j = 0; j < bucket.length; j++) {
          const slot = bucket[j] as number;
          if (this.visited[slot] === epoch) continue;
          this.visited[slot] = epoch;
          if ((this.expires[slot] as number) > now) found.push(slot);
        }
      }
    }
    const keep = Math.max(VERIFY, 4 * k);
    if (found.length <= keep) return found;
    return this.closest(found, probe, keep, Math.max(VERIFY_TIES, keep));
  }

  /**
   * Writes into `out` the PROBE_FLIPS bits of one table whose projections came closest to
   * zero: where a near-duplicate most likely hashed differently (query-directed multi-probe,
   * Lv et al.). Returns how many it wrote.
   */
  private likelyFlips(margins: Float64Array, base: number, bits: number, out: Int32Array): number {
    let n = 0;
    for (let b = 0; b < bits; b++) {
      const m = margins[base + b] as number;
      let i = n;
      while (i > 0 && (margins[base + (out[i - 1] as number)] as number) > m) {
        if (i < PROBE_FLIPS) out[i] = out[i - 1] as number;
        i--;
      }
      if (i < PROBE_FLIPS) {
        out[i] = b;
        if (n < PROBE_FLIPS) n++;
      }
    }
    return n;
  }

  /**
   * The `keep` candidates of smallest sketch distance, plus any tied with the last, up to
   * `max`: a counting selection, distances being small integers.
   */
  private closest(found: number[], probe: Uint16Array, keep: number, max: number): number[] {
    const tables = this.hasher.tables;
    const distances = new Uint16Array(found.length);
    const histogram = new Uint32Array(tables * this.hasher.bits + 1);
    for (let i = 0; i < found.length; i++) {
      const d = this.hasher.distance(probe, 0, this.codes, (found[i] as number) * tables);
      distances[i] = d;
      histogram[d] = (histogram[d] as number) + 1;
    }
    let cutoff = 0;
    for (let seen = 0; cutoff < histogram.length; cutoff++) {
      seen += histogram[cutoff] as number;
      if (seen >= keep) break;
    }
    const out: number[] = [];
    for (let i = 0; i < found.length && out.length < keep; i++)
      if ((distances[i] as number) < cutoff) out.push(found[i] as number);
    for (let i = 0; i < found.length && out.length < max; i++)
      if (distances[i] === cutoff) out.push(found[i] as number);
    return out;
  }
}
