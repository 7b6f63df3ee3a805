/**
 * The INT4-vs-BF16 quality check: for each prompt, the INT4 weights generate a greedy response; then both weight sets
 * run teacher-forced over the same tokens (prompt + that response) and their next-token distributions are compared at
 * every response position: top-1 agreement, KL(BF16 || INT4), mean |logit difference|, and where greedy decoding on
 * the BF16 weights would first have chosen another token. With `q4_0`, a third pass gives the same figures for the
 * BF16 experts rounded as llama.cpp's Q4_0 rounds them: what INT4 costs beside what users would run instead.
 */
import type { QualityAgreement, QualityPromptResult, QualityReport } from '../../common/ipc-contract.js';
import { mcnemarExact, pairedRatioInterval } from '../../common/paired-stats.js';
import type { BackendKind, NativeModel, WeightsKind } from './binding.js';
import { loadModel } from './binding.js';

const sum = (values: readonly number[]): number => values.reduce((a, b) => a + b, 0);

export interface QualityModelSpec {
  readonly dir: string;
  readonly weights: WeightsKind;
  readonly backend: BackendKind;
}

export interface QualityPrompt {
  readonly key: number;
  readonly tokenIds: readonly number[];
}

export interface QualityProgress {
  readonly done: number;
  readonly total: number;
  readonly elapsedMs: number;
  /** Estimated from the prompts done so far; null before the first. */
  readonly etaMs: number | null;
}

/**
 * One reference row, read once for every candidate compared with it: its argmax, its largest logit and
 * e[i] = exp(r[i] - max) with their sum, so P = e / sum and log-sum-exp = max + ln(sum).
 */
interface ReferenceRow {
  logits: Float32Array;
  top: number;
  max: number;
  sum: number;
  e: Float64Array;
}

function readReference(row: Float32Array, into: ReferenceRow | null): ReferenceRow {
  let top = 0;
  for (let i = 1; i < row.length; i++) if (row[i]! > row[top]!) top = i;
  const max = row[top]!;
  const e = into && into.e.length === row.length ? into.e : new Float64Array(row.length);
  let sum = 0;
  for (let i = 0; i < row.length; i++) sum += e[i] = Math.exp(row[i]! - max);
  return { logits: row, top, max, sum, e };
}

/**
 * A candidate row against a reference row: its argmax, KL(P || Q) in nats and the summed |logit difference|, in two
 * passes and one exp an element. KL = sum_i P_i (r_i - c_i) + lse(c) - lse(r), since P sums to 1.
 */
function compareRow(ref: ReferenceRow, c: Float32Array): { top: number; kl: number; absDiff: number } {
  const r = ref.logits;
  let top = 0;
  for (let i = 1; i < c.length; i++) if (c[i]! > c[top]!) top = i;
  const cMax = c[top]!;
  let cSum = 0;
  let weighted = 0;
  let absDiff = 0;
  for (let i = 0; i < c.length; i++) {
    const d = r[i]! - c[i]!;
    cSum += Math.exp(c[i]! - cMax);
    weighted += ref.e[i]! * d;
    absDiff += Math.abs(d);
  }
  const kl = weighted / ref.sum + (cMax + Math.log(cSum)) - (ref.max + Math.log(ref.sum));
  return { top, kl: Math.max(0, kl), absDiff };
}

/** KL(P || Q) of two logit rows, in nats. */
export function klDivergence(p: Float32Array, q: Float32Array): number {
  return compareRow(readReference(p, null), q).kl;
}

/** The q-quantile (nearest rank) of values. */
export function quantileNearestRank(values: readonly number[], q: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;
}

/** What one comparison's positions added up to so far. */
export interface AgreementSink {
  kls: number[];
  absDiffSum: number;
  absDiffCount: number;
  agree: number;
}

const newSink = (): AgreementSink => ({ kls: [], absDiffSum: 0, absDiffCount: 0, agree: 0 });

function agreement(sink: AgreementSink): QualityAgreement {
  const positions = sink.kls.length;
  return {
    top1Agreement: positions ? sink.agree / positions : 1,
    meanKl: positions ? sum(sink.kls) / positions : 0,
    p99Kl: quantileNearestRank(sink.kls, 0.99),
    meanAbsLogitDiff: sink.absDiffCount ? sink.absDiffSum / sink.absDiffCount : 0,
  };
}

/**
 * Compares the logits of `reference` and of each candidate (its own sink) at the response positions of a prompt:
 * row j (the logits at position promptTokens - 1 + j, as `logits(tokens, { from: promptTokens - 1 })` returns them)
 * predicts response token j. Each reference row is read once for all candidates. One result a candidate;
 * firstDivergence is the reference's, the same in each.
 */
export function compareTeacherForced(
  key: number,
  promptTokens: number,
  response: readonly number[],
  reference: readonly Float32Array[],
  candidates: readonly (readonly Float32Array[])[],
  sinks: readonly AgreementSink[],
): QualityPromptResult[] {
  if (candidates.length !== sinks.length) throw new Error(`compareTeacherForced: ${candidates.length} candidates, ${sinks.length} sinks`);
  const agree = candidates.map(() => 0);
  const klSum = candidates.map(() => 0);
  let firstDivergence: number | null = null;
  let ref: ReferenceRow | null = null;
  for (let j = 0; j < response.length; j++) {
    ref = readReference(reference[j]!, ref);
    if (firstDivergence === null && ref.top !== response[j]) firstDivergence = j;
    for (const [k, rows] of candidates.entries()) {
      const got = compareRow(ref, rows[j]!);
      const sink = sinks[k]!;
      if (got.top === ref.top) agree[k]!++;
      klSum[k]! += got.kl;
      sink.kls.push(got.kl);
      sink.absDiffSum += got.absDiff;
      sink.absDiffCount += ref.logits.length;
    }
  }
  const n = response.length;
  return candidates.map((_, k) => {
    sinks[k]!.agree += agree[k]!;
    return { key, promptTokens, responseTokens: n, top1Agreement: n ? agree[k]! / n : 1, meanKl: n ? klSum[k]! / n : 0, firstDivergence };
  });
}

type ComparedPrompt = QualityPromptResult & { readonly q4_0MeanKl: number };

/** The prompts the Q4_0 pass compared: it ran, and the response had positions. */
const q4_0Compared = (perPrompt: readonly QualityPromptResult[]): ComparedPrompt[] =>
  perPrompt.filter((p): p is ComparedPrompt => p.q4_0MeanKl !== undefined && p.responseTokens > 0);

/** On how many prompts each side came closer to BF16, and the sign test on those counts. */
export function closerCounts(perPrompt: readonly QualityPromptResult[]): { promptsInt4Closer: number; promptsQ4_0Closer: number; signTestP: number } {
  let int4 = 0;
  let q4 = 0;
  for (const p of q4_0Compared(perPrompt)) {
    if (p.meanKl < p.q4_0MeanKl) int4++;
    else if (p.meanKl > p.q4_0MeanKl) q4++;
  }
  return { promptsInt4Closer: int4, promptsQ4_0Closer: q4, signTestP: mcnemarExact(int4, q4) };
}

/** INT4's mean KL over Q4_0's, resampled by prompt: each prompt's summed KL on both sides. */
function meanKlRatioInterval(perPrompt: readonly QualityPromptResult[]): readonly [number, number] | null {
  const compared = q4_0Compared(perPrompt);
  return pairedRatioInterval(
    compared.map((p) => p.q4_0MeanKl * p.responseTokens),
    compared.map((p) => p.meanKl * p.responseTokens),
    sum,
  );
}

/**
 * Prompts whose INT4 responses are generated together by default (the CUDA backend's default reserved batch; on the
 * CPU `horizon quality` takes a CPU run's batch, qualityCheckCpuBatch, never fewer); each is then compared on its own.
 * The check's responses are short (128 tokens by default), so most run to the limit and the batch stays full without
 * continuous batching.
 */
export const QUALITY_GENERATE_BATCH = 8;

/** The context both models are loaded for: the longest prompt, its response and the token after it. */
export function qualityCheckContext(prompts: readonly QualityPrompt[], maxNewTokens: number): number {
  return Math.max(...prompts.map((p) => p.tokenIds.length)) + maxNewTokens + 1;
}

export async function runQualityCheck(opts: {
  readonly reference: QualityModelSpec;
  readonly candidate: QualityModelSpec;
  readonly prompts: readonly QualityPrompt[];
  readonly maxNewTokens: number;
  readonly stopTokens: readonly number[];
  readonly threads?: number;
  /** Also run the reference's experts rounded as llama.cpp's Q4_0 (a bf16 reference on the CPU). */
  readonly q4_0?: boolean;
  /** Prompts generated together; default QUALITY_GENERATE_BATCH. */
  readonly generateBatch?: number;
  readonly onProgress?: (p: QualityProgress) => void;
  readonly signal?: AbortSignal;
}): Promise<QualityReport> {
  if (opts.q4_0 && (opts.reference.weights !== 'bf16' || opts.reference.backend !== 'cpu')) {
    throw new Error('the Q4_0 comparison needs a bf16 reference on the CPU backend');
  }
  const started = Date.now();
  const maxContext = qualityCheckContext(opts.prompts, opts.maxNewTokens);
  const load = (s: QualityModelSpec) => loadModel({ dir: s.dir, weights: s.weights, backend: s.backend, maxContext, threads: opts.threads });
  // Both models stay loaded: the reference is mapped (its pages are the OS's to drop, and the Q4_0 pass, a call on the
  // same model, reads the same pages right after it), the candidate is the smaller.
  const candidate: NativeModel = await load(opts.candidate);
  let reference: NativeModel | undefined;
  try {
    reference = await load(opts.reference);
    const q4_0 = opts.q4_0 === true;
    const sink = newSink();
    const q4_0Sink = newSink();
    const perPrompt: QualityPromptResult[] = [];
    opts.onProgress?.({ done: 0, total: opts.prompts.length, elapsedMs: 0, etaMs: null });
    const batch = opts.generateBatch ?? QUALITY_GENERATE_BATCH;
    for (let start = 0; start < opts.prompts.length; start += batch) {
      if (opts.signal?.aborted) throw new Error('quality check cancelled');
      const chunk = opts.prompts.slice(start, start + batch);
      const gen = await candidate.generate(
        { prompts: chunk.map((p) => p.tokenIds), maxNewTokens: opts.maxNewTokens, stopTokens: [...opts.stopTokens] },
        undefined,
        opts.signal,
      );
      if (opts.signal?.aborted) throw new Error('quality check cancelled');
      for (const [j, p] of chunk.entries()) {
        const response = gen.results[j]!.tokens;
        if (response.length === 0) {
          perPrompt.push({ key: p.key, promptTokens: p.tokenIds.length, responseTokens: 0, top1Agreement: 1, meanKl: 0, firstDivergence: null });
        } else {
          const tokens = [...p.tokenIds, ...response];
          // Only the rows that predict the response: the prompt's other positions would be half the LM head's work.
          const from = p.tokenIds.length - 1;
          const refLogits = await reference.logits(tokens, { from });
          const rows = [await candidate.logits(tokens, { from })];
          if (q4_0) rows.push(await reference.logits(tokens, { expertRounding: 'q4_0', from }));
          const [r, q] = compareTeacherForced(p.key, p.tokenIds.length, response, refLogits, rows, q4_0 ? [sink, q4_0Sink] : [sink]);
          perPrompt.push(q ? { ...r!, q4_0MeanKl: q.meanKl } : r!);
        }
        const done = start + j + 1;
        const elapsedMs = Date.now() - started;
        opts.onProgress?.({ done, total: opts.prompts.length, elapsedMs, etaMs: (elapsedMs / done) * (opts.prompts.length - done) });
      }
    }
    const diverged = perPrompt.filter((r) => r.firstDivergence !== null).map((r) => r.firstDivergence!);
    return {
      prompts: perPrompt.length,
      positions: sink.kls.length,
      ...agreement(sink),
      promptsWithoutDivergence: perPrompt.length - diverged.length,
      medianFirstDivergence: diverged.length ? quantileNearestRank(diverged, 0.5) : null,
      q4_0: q4_0 ? { ...agreement(q4_0Sink), activations: 'q8_0', meanKlRatioCi95: meanKlRatioInterval(perPrompt), ...closerCounts(perPrompt) } : null,
      perPrompt,
    };
  } finally {
    reference?.close();
    candidate.close();
  }
}
