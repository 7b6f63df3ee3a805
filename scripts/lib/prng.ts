/** Deterministic 32-bit PRNG (mulberry32) and a fast table-driven normal sampler; no Math.random anywhere. */

/** FNV-1a 32-bit hash of a string, used to derive an independent stream per tensor name. */
export function hashString(s: string, seed = 0x811c9dc5): number {
  let h = seed >>> 0;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h >>> 0;
}

export class Prng {
  private state: number;

  constructor(seed: number) {
    this.state = seed >>> 0;
  }

  /** Uniform integer in [0, 2^32). */
  nextU32(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (t ^ (t >>> 14)) >>> 0;
  }

  /** Uniform float in (0, 1). */
  nextUnit(): number {
    return (this.nextU32() + 0.5) / 4294967296;
  }
}

const TABLE_BITS = 16;
let normalTable: Float64Array | undefined;

// A fixed table of Box-Muller normals indexed by PRNG bits: ~10x faster than Box-Muller per value, which matters
// when --full streams billions of weights; 65536 levels are plenty for random test weights.
function getNormalTable(): Float64Array {
  if (normalTable) return normalTable;
  const rng = new Prng(0x5eed1234);
  const table = new Float64Array(1 << TABLE_BITS);
  for (let i = 0; i < table.length; i += 2) {
    const r = Math.sqrt(-2 * Math.log(rng.nextUnit()));
    const theta = 2 * Math.PI * rng.nextUnit();
    table[i] = r * Math.cos(theta);
    table[i + 1] = r * Math.sin(theta);
  }
  normalTable = table;
  return table;
}

/** Fills `out` with approximately standard-normal samples times `std` plus `mean`. */
export function fillNormal(rng: Prng, out: Float32Array, std: number, mean = 0): void {
  const table = getNormalTable();
  for (let i = 0; i < out.length; i++) {
    out[i] = mean + std * table[rng.nextU32() >>> (32 - TABLE_BITS)]!;
  }
}

/** The 65536 values `mean + std * normal[i]` that fillNormal picks from, in index order (as float32). */
export function normalLevels(std: number, mean = 0): Float32Array {
  const table = getNormalTable();
  const out = new Float32Array(table.length);
  for (let i = 0; i < table.length; i++) out[i] = mean + std * table[i]!;
  return out;
}

let studentTables: Map<number, Float64Array> | undefined;

/**
 * 65536 levels of a Student-t distribution with `df` degrees of freedom (df > 2), rescaled to unit variance, times
 * `std` plus `mean`: heavy-tailed weights as trained checkpoints have, from the same seeded draws as normalLevels.
 */
export function studentLevels(std: number, df: number, mean = 0): Float32Array {
  if (!(df > 2)) throw new Error(`studentLevels: df must be above 2 for a finite variance, got ${df}`);
  studentTables ??= new Map();
  let table = studentTables.get(df);
  if (!table) {
    const normal = getNormalTable();
    const rng = new Prng(0x7a11 + Math.round(df * 1000));
    table = new Float64Array(normal.length);
    const unit = Math.sqrt((df - 2) / df);
    for (let i = 0; i < table.length; i++) {
      // chi-square with df degrees from df normals (df rounded for the draw count; the variance rescale uses df).
      let chi = 0;
      for (let k = 0; k < Math.round(df); k++) chi += normal[rng.nextU32() >>> (32 - TABLE_BITS)]! ** 2;
      table[i] = (normal[i]! / Math.sqrt(chi / Math.round(df))) * unit;
    }
    studentTables.set(df, table);
  }
  const out = new Float32Array(table.length);
  for (let i = 0; i < table.length; i++) out[i] = mean + std * table[i]!;
  return out;
}

/** Same draws as fillNormal, but each sample is looked up in a 65536-entry `levels` table of any element type. */
export function fillFromLevels(rng: Prng, levels: Uint16Array, out: Uint16Array): void {
  for (let i = 0; i < out.length; i++) out[i] = levels[rng.nextU32() >>> (32 - TABLE_BITS)]!;
}
