/**
 * 95% confidence intervals of one run's accuracies, as estimates of the model's accuracy on prompts like these (the
 * run's prompts being a sample of them). Prompt level is a binomial proportion (Wilson score interval). Instruction
 * level is not: a prompt's instructions pass or fail together more often than apart, so the instructions count as
 * fewer independent trials (the design effect, from the ratio estimator's cluster-robust variance over prompts),
 * never more than there are. Pure functions: main (RunDetail, `horizon show`) and the renderer give the same numbers.
 */

export type Interval = readonly [number, number];

export interface AccuracyIntervals {
  readonly promptStrict: Interval;
  readonly promptLoose: Interval;
  readonly instructionStrict: Interval;
  readonly instructionLoose: Interval;
}

/** One prompt's instructions: how many it has and how many passed, strict and loose. */
export interface PromptInstructionCounts {
  readonly count: number;
  readonly strict: number;
  readonly loose: number;
}

/** The normal quantile of a two-sided 95% interval. */
export const Z95 = 1.959963984540054;

/**
 * Wilson score interval of a proportion p observed over n trials (n may be an effective, non-integer count); its
 * bounds stay within [0, 1] and it does not collapse to a point at p = 0 or 1.
 */
export function wilsonInterval(p: number, n: number, z = Z95): Interval {
  if (!(n > 0)) throw new Error(`wilsonInterval: n must be positive, got ${n}`);
  const z2n = (z * z) / n;
  const center = (p + z2n / 2) / (1 + z2n);
  const half = (z / (1 + z2n)) * Math.sqrt((p * (1 - p)) / n + z2n / (4 * n));
  return [Math.max(0, center - half), Math.min(1, center + half)];
}

/** The Wilson interval of `passed` of `count` (an instruction type's pass rate); null when there were none. */
export function passRateInterval(passed: number, count: number): Interval | null {
  return count > 0 ? wilsonInterval(passed / count, count) : null;
}

/**
 * Instruction-level interval from each prompt's (passed, count): the Wilson interval over the effective number of
 * instructions, p(1 - p) over the cluster-robust variance n/(n-1) * sum (passed_i - p count_i)^2 / (sum count)^2,
 * capped at the instruction count (a design effect below 1 is not trusted). Needs two prompts with instructions.
 */
export function clusteredInterval(prompts: readonly { readonly passed: number; readonly count: number }[], z = Z95): Interval {
  const used = prompts.filter((q) => q.count > 0);
  const n = used.length;
  if (n < 2) throw new Error(`clusteredInterval: needs at least 2 prompts with instructions, got ${n}`);
  let total = 0;
  let passed = 0;
  for (const q of used) {
    total += q.count;
    passed += q.passed;
  }
  const p = passed / total;
  let squares = 0;
  for (const q of used) squares += (q.passed - p * q.count) ** 2;
  const variance = ((n / (n - 1)) * squares) / (total * total);
  const effective = variance > 0 ? Math.min(total, (p * (1 - p)) / variance) : total;
  return wilsonInterval(p, effective, z);
}

/** The four intervals of a run's stored responses; null below two prompts with instructions, as for none. */
export function accuracyIntervals(prompts: readonly PromptInstructionCounts[]): AccuracyIntervals | null {
  const used = prompts.filter((q) => q.count > 0);
  if (used.length < 2) return null;
  const n = used.length;
  const promptsPassing = (mode: 'strict' | 'loose') => used.filter((q) => q[mode] === q.count).length / n;
  return {
    promptStrict: wilsonInterval(promptsPassing('strict'), n),
    promptLoose: wilsonInterval(promptsPassing('loose'), n),
    instructionStrict: clusteredInterval(used.map((q) => ({ passed: q.strict, count: q.count }))),
    instructionLoose: clusteredInterval(used.map((q) => ({ passed: q.loose, count: q.count }))),
  };
}
