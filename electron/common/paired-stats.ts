/**
 * Paired statistics of two runs over the same prompts: the 2x2 table of pass/fail pairs, the exact two-sided McNemar
 * test on its discordant cells, and the accuracy difference B - A with a seeded paired-bootstrap 95% interval.
 * Pure functions: main (RunsService, `horizon compare`) and the renderer format the same numbers.
 */

import { quantile } from './perf-stats.js';

/** One unit's verdict in run A and in run B, with the cluster (prompt) it belongs to for the bootstrap. */
export interface PairedVerdict {
  readonly a: boolean;
  readonly b: boolean;
  readonly cluster: number;
}

export interface PairedLevel {
  /** Units compared (prompts, or instructions of the prompts both runs scored). */
  readonly n: number;
  readonly bothPass: number;
  /** A passes, B fails. */
  readonly regressions: number;
  /** A fails, B passes. */
  readonly improvements: number;
  readonly bothFail: number;
  readonly accuracyA: number;
  readonly accuracyB: number;
  /** accuracyB - accuracyA. */
  readonly delta: number;
  /** 95% paired-bootstrap interval of delta (prompts resampled with replacement, seeded). */
  readonly ci95: readonly [number, number];
  /** Exact two-sided McNemar p-value: binomial(regressions + improvements, 1/2) on the smaller discordant cell. */
  readonly pValue: number;
}

export const BOOTSTRAP_SAMPLES = 10_000;
export const BOOTSTRAP_SEED = 0x5eed2024;

/** ln(n!) by summation, cached: n stays below a few thousand here. */
const logFactorials: number[] = [0];
function logFactorial(n: number): number {
  for (let k = logFactorials.length; k <= n; k++) logFactorials[k] = logFactorials[k - 1]! + Math.log(k);
  return logFactorials[n]!;
}

/**
 * Exact two-sided McNemar test: with n = b + c discordant pairs, p = min(1, 2 * P(X <= min(b, c))) for
 * X ~ Binomial(n, 1/2); 1 when there are none.
 */
export function mcnemarExact(b: number, c: number): number {
  const n = b + c;
  if (n === 0) return 1;
  const k = Math.min(b, c);
  let tail = 0;
  for (let i = 0; i <= k; i++) tail += Math.exp(logFactorial(n) - logFactorial(i) - logFactorial(n - i) - n * Math.LN2);
  return Math.min(1, 2 * tail);
}

/** mulberry32: a small seeded generator, so the same runs give the same interval everywhere. */
export function prng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * A seeded paired bootstrap's 95% interval of `statistic(b) / statistic(a)`: each resample draws units (prompts) with
 * replacement and takes the same units on both sides. Null with fewer than two units, or a resample whose statistic is
 * missing or 0 on A's side.
 */
export function pairedRatioInterval<T>(
  a: readonly T[],
  b: readonly T[],
  statistic: (drawn: readonly T[]) => number | null,
  samples = BOOTSTRAP_SAMPLES,
  seed = BOOTSTRAP_SEED,
): readonly [number, number] | null {
  if (a.length !== b.length) throw new Error(`pairedRatioInterval: ${a.length} units against ${b.length}`);
  if (a.length < 2) return null;
  const rand = prng(seed);
  const ratios: number[] = [];
  const da: T[] = [];
  const db: T[] = [];
  for (let s = 0; s < samples; s++) {
    da.length = 0;
    db.length = 0;
    for (let i = 0; i < a.length; i++) {
      const j = Math.floor(rand() * a.length);
      da.push(a[j]!);
      db.push(b[j]!);
    }
    const x = statistic(da);
    const y = statistic(db);
    if (x === null || y === null || !(x > 0)) return null;
    ratios.push(y / x);
  }
  ratios.sort((u, v) => u - v);
  return [quantile(ratios, 0.025), quantile(ratios, 0.975)];
}

/** Counts, accuracies, McNemar p and the bootstrap interval of B - A over paired verdicts. */
export function pairedLevel(pairs: readonly PairedVerdict[], samples = BOOTSTRAP_SAMPLES, seed = BOOTSTRAP_SEED): PairedLevel {
  let bothPass = 0;
  let regressions = 0;
  let improvements = 0;
  let bothFail = 0;
  for (const p of pairs) {
    if (p.a && p.b) bothPass++;
    else if (p.a) regressions++;
    else if (p.b) improvements++;
    else bothFail++;
  }
  const n = pairs.length;
  const accuracyA = n ? (bothPass + regressions) / n : 0;
  const accuracyB = n ? (bothPass + improvements) / n : 0;
  // Resample clusters (prompts), so instruction-level intervals keep the instructions of one prompt together.
  const clusters = new Map<number, { n: number; diff: number }>();
  for (const p of pairs) {
    const c = clusters.get(p.cluster) ?? { n: 0, diff: 0 };
    c.n++;
    c.diff += Number(p.b) - Number(p.a);
    clusters.set(p.cluster, c);
  }
  const list = [...clusters.values()];
  let ci95: [number, number] = [0, 0];
  if (list.length > 0) {
    const rand = prng(seed);
    const deltas: number[] = [];
    for (let s = 0; s < samples; s++) {
      let units = 0;
      let diff = 0;
      for (let i = 0; i < list.length; i++) {
        const c = list[Math.floor(rand() * list.length)]!;
        units += c.n;
        diff += c.diff;
      }
      deltas.push(units ? diff / units : 0);
    }
    deltas.sort((x, y) => x - y);
    ci95 = [quantile(deltas, 0.025), quantile(deltas, 0.975)];
  }
  return {
    n,
    bothPass,
    regressions,
    improvements,
    bothFail,
    accuracyA,
    accuracyB,
    delta: accuracyB - accuracyA,
    ci95,
    pValue: mcnemarExact(regressions, improvements),
  };
}

/** A plain-language reading of one level: "no significant difference (p = 0.62)" or "B regresses 12 ..., p = 0.04". */
export function describeLevel(level: PairedLevel, unit = 'prompt', alpha = 0.05): string {
  const p = level.pValue < 0.001 ? 'p < 0.001' : `p = ${level.pValue.toFixed(level.pValue < 0.01 ? 3 : 2)}`;
  const moves = `B regresses ${level.regressions} ${unit}${level.regressions === 1 ? '' : 's'}, improves ${level.improvements}`;
  if (level.regressions + level.improvements === 0) return `no ${unit}s change verdict`;
  if (level.pValue >= alpha) return `no significant difference (${moves}, ${p})`;
  return `${level.delta < 0 ? 'B is worse' : 'B is better'}: ${moves}, ${p}`;
}

/** A prompt's or an instruction's verdicts in one run. */
export interface StrictLoose {
  readonly strict: boolean;
  readonly loose: boolean;
}

/** One instruction of a prompt both runs scored: its type and its verdicts in run A and in run B. */
export interface PairedInstruction {
  readonly instructionId: string;
  readonly a: StrictLoose;
  readonly b: StrictLoose;
}

/** One instruction type over the prompts both runs scored: pass counts in each run and the strict verdicts that moved. */
export interface PairedInstructionType {
  readonly instructionId: string;
  /** Instructions of this type compared. */
  readonly n: number;
  readonly strictA: number;
  readonly strictB: number;
  readonly looseA: number;
  readonly looseB: number;
  /** Strict: A passes, B fails. */
  readonly strictRegressions: number;
  /** Strict: A fails, B passes. */
  readonly strictImprovements: number;
}

/** The paired instructions tallied by type, sorted by type. */
export function pairedByInstructionType(pairs: readonly PairedInstruction[]): PairedInstructionType[] {
  const byType = new Map<string, { -readonly [K in keyof PairedInstructionType]: PairedInstructionType[K] }>();
  for (const p of pairs) {
    let t = byType.get(p.instructionId);
    if (!t) {
      t = { instructionId: p.instructionId, n: 0, strictA: 0, strictB: 0, looseA: 0, looseB: 0, strictRegressions: 0, strictImprovements: 0 };
      byType.set(p.instructionId, t);
    }
    t.n++;
    t.strictA += Number(p.a.strict);
    t.strictB += Number(p.b.strict);
    t.looseA += Number(p.a.loose);
    t.looseB += Number(p.b.loose);
    t.strictRegressions += Number(p.a.strict && !p.b.strict);
    t.strictImprovements += Number(!p.a.strict && p.b.strict);
  }
  return [...byType.keys()].sort().map((id) => byType.get(id)!);
}
