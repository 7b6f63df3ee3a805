/** Summaries of per-response timings, the same for the Results page, the performance campaign and its verifier. */

/** The q-quantile (0..1) of ascending `sorted`, interpolating between the two nearest ranks (numpy's default). */
export function quantile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) throw new Error('quantile of no values');
  const at = (sorted.length - 1) * Math.min(1, Math.max(0, q));
  const lo = Math.floor(at);
  const hi = Math.ceil(at);
  return sorted[lo]! + (sorted[hi]! - sorted[lo]!) * (at - lo);
}

export interface Summary {
  readonly n: number;
  readonly mean: number;
  readonly p50: number;
  readonly p90: number;
  readonly p99: number;
  readonly min: number;
  readonly max: number;
}

/** n, mean, median, p90, p99, min and max of the finite values; null when there are none. */
export function summarize(values: readonly (number | null)[]): Summary | null {
  const v = values.filter((x): x is number => x !== null && Number.isFinite(x)).sort((a, b) => a - b);
  if (v.length === 0) return null;
  return {
    n: v.length,
    mean: v.reduce((s, x) => s + x, 0) / v.length,
    p50: quantile(v, 0.5),
    p90: quantile(v, 0.9),
    p99: quantile(v, 0.99),
    min: v[0]!,
    max: v[v.length - 1]!,
  };
}

/** `bins` equal-width bins over [min, max] of the finite values (the last bin holds max); empty when none. */
export function histogram(values: readonly (number | null)[], bins: number): { lo: number; hi: number; count: number }[] {
  const v = values.filter((x): x is number => x !== null && Number.isFinite(x));
  if (v.length === 0 || bins < 1) return [];
  const min = Math.min(...v);
  const max = Math.max(...v);
  const width = max > min ? (max - min) / bins : 1;
  const out = Array.from({ length: max > min ? bins : 1 }, (_, i) => ({ lo: min + i * width, hi: min + (i + 1) * width, count: 0 }));
  for (const x of v) out[Math.min(out.length - 1, Math.floor((x - min) / width))]!.count++;
  return out;
}
