/**
 * Random-hyperplane locality-sensitive hashing (SimHash). Each of `tables` codes is `bits`
 * signs of projections on random Gaussian directions; two vectors at angle θ agree on a bit
 * with probability 1 − θ/π, so near-duplicates share codes and the number of differing bits
 * over all codes (a 384-bit sketch by default) estimates the angle.
 *
 * The directions are drawn from a fixed seed: the same dimension always gets the same
 * hyperplanes, so codes stay comparable for the life of the process.
 */

export const DEFAULT_TABLES = 24;
export const DEFAULT_BITS = 16;

const POPCOUNT16 = (() => {
  const t = new Uint8Array(1 << 16);
  for (let i = 1; i < t.length; i++) t[i] = (t[i >> 1] as number) + (i & 1);
  return t;
})();

function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export class SimHash {
  readonly dim: number;
  readonly tables: number;
  readonly bits: number;
  /** Hyperplanes transposed (input dimension major), so a sparse input touches only its rows. */
  private readonly planes: Float32Array;
  private readonly projections: Float64Array;

  constructor(dim: number, tables = DEFAULT_TABLES, bits = DEFAULT_BITS, seed = 0x51a4) {
    if (bits < 1 || bits > 16) throw new RangeError('simhash: 1..16 bits per table');
    this.dim = dim;
    this.tables = tables;
    this.bits = bits;
    const h = tables * bits;
    this.planes = new Float32Array(dim * h);
    this.projections = new Float64Array(h);
    const random = mulberry32(seed ^ dim);
    for (let i = 0; i < this.planes.length; i += 2) {
      // Box–Muller: two standard normals per pair of uniforms.
      const r = Math.sqrt(-2 * Math.log(random() || Number.MIN_VALUE));
      const a = 2 * Math.PI * random();
      this.planes[i] = r * Math.cos(a);
      if (i + 1 < this.planes.length) this.planes[i + 1] = r * Math.sin(a);
    }
  }

  /**
   * Writes the `tables` codes of `v` (its first `dim` components) into `out` from `offset`;
   * with `margins`, also each bit's |projection| — how close it came to flipping.
   */
  hash(v: Float32Array, out: Uint16Array, offset = 0, margins?: Float64Array): void {
    const h = this.tables * this.bits;
    const proj = this.projections;
    const planes = this.planes;
    proj.fill(0);
    for (let d = 0; d < this.dim; d++) {
      const x = v[d] as number;
      if (x === 0) continue; // builtin-embedder vectors are mostly zeros
      const row = d * h;
      for (let j = 0; j < h; j++) proj[j] = (proj[j] as number) + x * (planes[row + j] as number);
    }
    for (let t = 0; t < this.tables; t++) {
      let code = 0;
      const base = t * this.bits;
      for (let b = 0; b < this.bits; b++) if ((proj[base + b] as number) > 0) code |= 1 << b;
      out[offset + t] = code;
    }
    if (margins) for (let j = 0; j < h; j++) margins[j] = Math.abs(proj[j] as number);
  }

  /** Differing bits between two sketches (each `tables` codes long). */
  distance(a: Uint16Array, aOffset: number, b: Uint16Array, bOffset: number): number {
    let d = 0;
    for (let t = 0; t < this.tables; t++)
      d += POPCOUNT16[(a[aOffset + t] as number) ^ (b[bOffset + t] as number)] as number;
    return d;
  }
}
