/** A quality check in one line, as `horizon prepare --list` and the Results page give it. */
import type { Q4_0Agreement, QualityReport } from './ipc-contract.js';

/** A ratio interval as the quality lines write it: "0.70-0.83x". */
export const ratioRange = ([lo, hi]: readonly [number, number]): string => `${lo.toFixed(2)}-${hi.toFixed(2)}x`;

/** INT4's mean KL over Q4_0's; null without a Q4_0 comparison, or where Q4_0's is 0. */
export function meanKlRatio(q: QualityReport): number | null {
  return q.q4_0 && q.q4_0.meanKl > 0 ? q.meanKl / q.q4_0.meanKl : null;
}

/** How Q4_0's experts took their inputs, in words. */
export function q4_0Inputs(q: Q4_0Agreement): string {
  return q.activations === 'q8_0' ? '8-bit inputs, as llama.cpp runs it' : 'float inputs, which favour it (an older check)';
}

/** INT4's agreement with BF16 and, when the check ran it, Q4_0's beside it. */
export function qualitySummary(q: QualityReport): string {
  const pct = (v: number) => `${(100 * v).toFixed(2)}%`;
  const kl = (v: number) => `${v.toExponential(2)} nats`;
  const head = `INT4 check (${q.prompts} prompts, ${q.positions} positions): top-1 agreement ${pct(q.top1Agreement)}, mean KL ${kl(q.meanKl)}`;
  if (!q.q4_0) return head;
  const ci = q.q4_0.meanKlRatioCi95;
  const r = meanKlRatio(q);
  const ratio = r === null ? '' : ` (INT4's mean KL ${r.toFixed(2)}x${ci ? `, 95% CI ${ratioRange(ci)}` : ''})`;
  const inputs = q.q4_0.activations === 'float' ? ' (float inputs)' : '';
  return `${head}; llama.cpp's Q4_0${inputs}: ${pct(q.q4_0.top1Agreement)}, ${kl(q.q4_0.meanKl)}${ratio}`;
}

/** The per-prompt count and its sign test in words: "INT4 is closer to BF16 on 27 prompts, Q4_0 on 5 (sign test p = 0.0001)". */
export function closerSentence(q: Q4_0Agreement): string | null {
  if (q.promptsInt4Closer === null || q.promptsQ4_0Closer === null || q.signTestP === null) return null;
  const prompts = (n: number) => `${n} prompt${n === 1 ? '' : 's'}`;
  const p = q.signTestP < 0.0001 ? 'p < 0.0001' : `p = ${q.signTestP.toPrecision(2)}`;
  return `INT4 is closer to BF16 on ${prompts(q.promptsInt4Closer)}, Q4_0 on ${q.promptsQ4_0Closer} (sign test ${p})`;
}
