/** A quality check in one line, as `horizon prepare --list` and the Results page give it. */
import type { QualityReport } from './ipc-contract.js';

/** A ratio interval as the quality lines write it: "0.70-0.83x". */
export const ratioRange = ([lo, hi]: readonly [number, number]): string => `${lo.toFixed(2)}-${hi.toFixed(2)}x`;

/** INT4's agreement with BF16 and, when the check ran it, Q4_0's beside it. */
export function qualitySummary(q: QualityReport): string {
  const pct = (v: number) => `${(100 * v).toFixed(2)}%`;
  const kl = (v: number) => `${v.toExponential(2)} nats`;
  const head = `INT4 check (${q.prompts} prompts, ${q.positions} positions): top-1 agreement ${pct(q.top1Agreement)}, mean KL ${kl(q.meanKl)}`;
  if (!q.q4_0) return head;
  const ci = q.q4_0.meanKlRatioCi95;
  const ratio = q.q4_0.meanKl > 0 ? ` (INT4's mean KL ${(q.meanKl / q.q4_0.meanKl).toFixed(2)}x${ci ? `, 95% CI ${ratioRange(ci)}` : ''})` : '';
  return `${head}; llama.cpp's Q4_0: ${pct(q.q4_0.top1Agreement)}, ${kl(q.q4_0.meanKl)}${ratio}`;
}
