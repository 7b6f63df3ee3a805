/**
 * The performance campaign, as the published Horizon campaign ran it: fixed IFEval prompts generated one at a time,
 * greedy with EOS suppressed, in repeated blocks, for full expert residency and each expert budget asked for. Its
 * records and the aggregates every reader (the app, `horizon perf`, the ZIP verifier) computes the same way from them.
 */
import type { RunBackend, ZipOrigin } from './ipc-contract.js';
import { BOOTSTRAP_SAMPLES, BOOTSTRAP_SEED, prng } from './paired-stats.js';
import { quantile } from './perf-stats.js';

export const PERF_FORMAT = 'horizon-perf-v1';

/**
 * Every campaign id starts with it and no run id does, so a campaign's ZIP in exports/ (`<id>.zip`) never takes a run's
 * name: run ids are times (`20261206T205311-c5b042`), campaign ids `perf-` and such a time.
 */
export const CAMPAIGN_ID_PREFIX = 'perf-';

/** The campaign's fixed settings; a ZIP records them and the verifier checks its requests against them. */
export const PERF_SETTINGS = {
  /** The first prompts of IFEval's input_data.jsonl, in file order. */
  prompts: 12,
  /** Each prompt is generated once per block; blocks run one after another. */
  blocks: 3,
  maxNewTokens: 128,
  /** A generation of this many tokens before each configuration's measured requests, excluded from every figure. */
  warmupTokens: 64,
} as const;

export type PerfSettings = { readonly prompts: number; readonly blocks: number; readonly maxNewTokens: number; readonly warmupTokens: number };

/** One configuration: full residency (no budget) or a GPU expert budget. */
export interface PerfConfigSpec {
  /** "full residency", or e.g. "4 GiB experts". */
  readonly label: string;
  /** Device memory for resident experts; null = the backend's default (all experts when they fit; the CPU backend). */
  readonly expertBudgetBytes: number | null;
}

/** One measured request: a prompt generated alone, its timing and what the backend did for it. */
export interface PerfRequestRecord {
  /** Index into the campaign's configs. */
  readonly config: number;
  readonly block: number;
  /** The IFEval key of the prompt. */
  readonly key: number;
  readonly promptTokens: number;
  /** Generated tokens (EOS suppressed: the budget unless cancelled). */
  readonly tokens: number;
  /** From the start of the prompt's prefill to its first token. */
  readonly ttftMs: number;
  /** After the first token; 0 with fewer than two tokens. */
  readonly decodeTokensPerSecond: number;
  /** The request's wall time in the runtime (prefill, decode and everything between). */
  readonly responseMs: number;
  /** CUDA: peak device memory over the request (its scope in the campaign's device); 0 on the CPU. */
  readonly peakMemoryBytes: number;
  readonly h2dBytes: number;
  readonly expertHits: number;
  readonly expertMisses: number;
  readonly expertEvictions: number;
}

/** What one configuration comes to over its requests. */
export interface PerfConfigAggregate {
  readonly requests: number;
  readonly generatedTokens: number;
  /** Pooled over requests: every token after each first, over the time they took. Null when none had two tokens. */
  readonly decodeTokensPerSecond: number | null;
  readonly ttftMsP50: number | null;
  readonly ttftMsP90: number | null;
  readonly responseMsP50: number | null;
  /** The highest of its requests' peaks; null on the CPU backend (no device memory). */
  readonly peakMemoryBytes: number | null;
  readonly h2dBytes: number;
  readonly expertHits: number;
  readonly expertMisses: number;
  readonly expertEvictions: number;
}

/** Decode tokens (after each request's first) and their seconds, over the requests with two tokens or more. */
function decodeTotals(requests: readonly PerfRequestRecord[]): { tokens: number; seconds: number } {
  let tokens = 0;
  let seconds = 0;
  for (const r of requests) {
    if (r.tokens >= 2 && r.decodeTokensPerSecond > 0) {
      tokens += r.tokens - 1;
      seconds += (r.tokens - 1) / r.decodeTokensPerSecond;
    }
  }
  return { tokens, seconds };
}

/** Aggregates one configuration's requests (in any order: every figure is order-free). */
export function aggregateConfig(requests: readonly PerfRequestRecord[], onCpu: boolean): PerfConfigAggregate {
  const { tokens: decodeTokens, seconds: decodeSeconds } = decodeTotals(requests);
  const sorted = (f: (r: PerfRequestRecord) => number) => requests.map(f).filter((v) => v >= 0).sort((a, b) => a - b);
  const ttft = sorted((r) => (r.tokens > 0 ? r.ttftMs : -1));
  const response = sorted((r) => r.responseMs);
  const sum = (f: (r: PerfRequestRecord) => number) => requests.reduce((s, r) => s + f(r), 0);
  return {
    requests: requests.length,
    generatedTokens: sum((r) => r.tokens),
    decodeTokensPerSecond: decodeSeconds > 0 ? decodeTokens / decodeSeconds : null,
    ttftMsP50: ttft.length ? quantile(ttft, 0.5) : null,
    ttftMsP90: ttft.length ? quantile(ttft, 0.9) : null,
    responseMsP50: response.length ? quantile(response, 0.5) : null,
    peakMemoryBytes: onCpu || requests.length === 0 ? null : Math.max(...requests.map((r) => r.peakMemoryBytes)),
    h2dBytes: sum((r) => r.h2dBytes),
    expertHits: sum((r) => r.expertHits),
    expertMisses: sum((r) => r.expertMisses),
    expertEvictions: sum((r) => r.expertEvictions),
  };
}

/** Every configuration's aggregate, in config order. */
export function aggregateCampaign(configs: number, requests: readonly PerfRequestRecord[], onCpu: boolean): PerfConfigAggregate[] {
  return Array.from({ length: configs }, (_, i) => aggregateConfig(requests.filter((r) => r.config === i), onCpu));
}

/** Checks one request record's shape (a ZIP's line, a worker's answer turned into one); a sentence when wrong. */
export function requestRecordProblem(x: unknown): string | null {
  if (typeof x !== 'object' || x === null || Array.isArray(x)) return 'not a JSON object';
  const r = x as Record<string, unknown>;
  for (const k of ['config', 'block', 'key', 'promptTokens', 'tokens'] as const) {
    if (!Number.isInteger(r[k]) || (r[k] as number) < 0) return `${k} must be a non-negative integer`;
  }
  for (const k of ['ttftMs', 'decodeTokensPerSecond', 'responseMs', 'peakMemoryBytes', 'h2dBytes', 'expertHits', 'expertMisses', 'expertEvictions'] as const) {
    if (typeof r[k] !== 'number' || !Number.isFinite(r[k]) || (k !== 'ttftMs' && (r[k] as number) < 0)) return `${k} must be a finite number${k === 'ttftMs' ? '' : ' >= 0'}`;
  }
  return null;
}

/** Parses an expert-budget list in GiB ("4,8,12.5"): the budgets in bytes, in the order given, without repeats. */
export function parseBudgetList(text: string): number[] {
  const out: number[] = [];
  for (const part of text.split(',').map((s) => s.trim()).filter(Boolean)) {
    const gib = Number(part);
    if (!Number.isFinite(gib) || gib < 0.25 || gib > 1024) throw new Error(`expert budget '${part}' must be a number of GiB from 0.25 to 1024`);
    const bytes = Math.round(gib * 2 ** 30);
    if (!out.includes(bytes)) out.push(bytes);
  }
  return out;
}

/** The configurations of a campaign: full residency first, then each budget. */
export function campaignConfigs(budgetsBytes: readonly number[]): PerfConfigSpec[] {
  const gib = (b: number) => `${Number((b / 2 ** 30).toFixed(2))} GiB experts`;
  return [{ label: 'full residency', expertBudgetBytes: null }, ...budgetsBytes.map((b) => ({ label: gib(b), expertBudgetBytes: b }))];
}

export type PerfStatus = 'running' | 'completed' | 'failed' | 'cancelled';

/** A campaign as stored: what ran, on what, with which settings; its requests and aggregates come with its detail. */
export interface PerfCampaign {
  readonly id: string;
  readonly createdAt: string;
  readonly finishedAt: string | null;
  readonly status: PerfStatus;
  readonly error: string | null;
  readonly model: { readonly modelId: string; readonly repo: string; readonly revision: string; readonly weights: 'int4' | 'bf16'; readonly manifestSha256: string };
  readonly backend: RunBackend;
  readonly deviceLabel: string;
  /** What peakMemoryBytes measures on CUDA ('process': this app; 'device': the whole GPU); null on the CPU. */
  readonly peakMemoryScope: 'process' | 'device' | null;
  readonly settings: PerfSettings & { readonly keys: readonly number[] };
  /** Each configuration with where its weights were, as the runtime reported it (null until it loaded). */
  readonly configs: readonly (PerfConfigSpec & { readonly residency: string | null })[];
  /** Where a campaign read from a campaign ZIP came from (`perf:importZip`); null for one measured here. */
  readonly imported: ZipOrigin | null;
  /** Its label (label.ts, as runs have theirs); null for none. */
  readonly label: string | null;
}

export interface PerfCampaignDetail extends PerfCampaign {
  readonly aggregates: readonly PerfConfigAggregate[];
  readonly requests: readonly PerfRequestRecord[];
}

/** Whether a campaign read from a ZIP ran on the CPU: ZIPs written before the backend names were unified say 'CPU'. */
export function onCpuBackend(backend: string): boolean {
  return backend === 'cpu' || backend === 'CPU';
}

/** One configuration of two campaigns side by side (matched by label), B as the change from A. */
export interface PerfConfigComparison {
  readonly label: string;
  /** Null where that campaign has no configuration of this label. */
  readonly a: PerfConfigAggregate | null;
  readonly b: PerfConfigAggregate | null;
  /** B's pooled decode rate over A's; null unless both have one. */
  readonly decodeRatio: number | null;
  /** Its 95% interval (decodeRatioInterval); null where the two did not measure two prompts in common. */
  readonly decodeRatioCi95: readonly [number, number] | null;
  /** B's TTFT p50 over A's (below 1: B answers sooner); null unless both have one. */
  readonly ttftRatio: number | null;
  /** Its 95% interval (ttftRatioInterval), as decodeRatioCi95. */
  readonly ttftRatioCi95: readonly [number, number] | null;
}

/** Two campaigns compared: every configuration label in A's order then B's, and what makes the ratios less like-for-like. */
export interface PerfComparison {
  readonly configs: readonly PerfConfigComparison[];
  /** Each way the campaigns did not measure the same thing (model, weights, settings, prompts); empty when they did. */
  readonly differences: readonly string[];
}

/**
 * A seeded bootstrap's 95% interval of `statistic(B) / statistic(A)` over the prompts both campaigns measured, crossed
 * with each campaign's blocks: each resample draws prompts with replacement, the same ones on both sides (so a prompt
 * slow in both stays paired), and each side's blocks with replacement, each side its own (the two ran at different
 * times), and takes every drawn prompt's requests in every drawn block (`summary` of them). A block that a machine
 * ran slow throughout (heat, another program) widens the interval, which a draw of prompts alone would keep out: every
 * drawn prompt brought all its blocks. Blocks are drawn from those in which the side measured every prompt in common
 * (a cancelled campaign's last block is left out of the interval, not of the ratio). The blocks come from a second
 * seeded stream, so with blocks alike the prompts' draws, and the interval, are those of a draw of prompts alone. Null
 * with fewer than two prompts in common or a resample whose statistic is missing or 0 on A's side.
 */
function pairedPromptRatioInterval<T>(
  a: readonly PerfRequestRecord[],
  b: readonly PerfRequestRecord[],
  summary: (requests: readonly PerfRequestRecord[]) => T,
  statistic: (drawn: readonly T[]) => number | null,
  samples: number,
  seed: number,
): readonly [number, number] | null {
  // key -> block -> that prompt's requests in that block, and the blocks a side ran.
  const cells = (requests: readonly PerfRequestRecord[]) => {
    const byKey = new Map<number, Map<number, PerfRequestRecord[]>>();
    const blocks = new Set<number>();
    for (const r of requests) {
      blocks.add(r.block);
      let byBlock = byKey.get(r.key);
      if (!byBlock) byKey.set(r.key, (byBlock = new Map()));
      const list = byBlock.get(r.block);
      if (list) list.push(r);
      else byBlock.set(r.block, [r]);
    }
    return { byKey, blocks: [...blocks].sort((x, y) => x - y) };
  };
  const ca = cells(a);
  const cb = cells(b);
  const keys = [...ca.byKey.keys()].filter((k) => cb.byKey.has(k));
  if (keys.length < 2) return null;
  // The blocks a side measured every common prompt in; a side without one (cancelled in its first block) has its
  // requests taken whole, as one block.
  const complete = (c: ReturnType<typeof cells>) => c.blocks.filter((block) => keys.every((k) => c.byKey.get(k)!.has(block)));
  const blocksA = complete(ca);
  const blocksB = complete(cb);
  const prompts = prng(seed);
  const blockDraws = prng(seed ^ 0x9e3779b9);
  const drawBlocks = (c: ReturnType<typeof cells>, blocks: readonly number[]) =>
    blocks.length === 0 ? c.blocks : blocks.map(() => blocks[Math.floor(blockDraws() * blocks.length)]!);
  const side = (c: ReturnType<typeof cells>, drawnKeys: readonly number[], drawnBlocks: readonly number[]) =>
    statistic(
      drawnKeys.map((k) => {
        const byBlock = c.byKey.get(k)!;
        const requests: PerfRequestRecord[] = [];
        for (const block of drawnBlocks) requests.push(...(byBlock.get(block) ?? []));
        return summary(requests);
      }),
    );
  const ratios: number[] = [];
  for (let s = 0; s < samples; s++) {
    const drawnKeys = keys.map(() => keys[Math.floor(prompts() * keys.length)]!);
    const x = side(ca, drawnKeys, drawBlocks(ca, blocksA));
    const y = side(cb, drawnKeys, drawBlocks(cb, blocksB));
    if (x === null || y === null || !(x > 0)) return null;
    ratios.push(y / x);
  }
  ratios.sort((u, v) => u - v);
  return [quantile(ratios, 0.025), quantile(ratios, 0.975)];
}

/** The 95% interval of B's pooled decode rate over A's for one configuration (pairedPromptRatioInterval). */
export function decodeRatioInterval(
  a: readonly PerfRequestRecord[],
  b: readonly PerfRequestRecord[],
  samples = BOOTSTRAP_SAMPLES,
  seed = BOOTSTRAP_SEED,
): readonly [number, number] | null {
  // As aggregateConfig pools it: every drawn prompt's decode tokens over their seconds.
  const pooled = (drawn: readonly { tokens: number; seconds: number }[]) => {
    let tokens = 0;
    let seconds = 0;
    for (const d of drawn) {
      tokens += d.tokens;
      seconds += d.seconds;
    }
    return seconds > 0 ? tokens / seconds : null;
  };
  return pairedPromptRatioInterval(a, b, decodeTotals, pooled, samples, seed);
}

/** The 95% interval of B's TTFT p50 over A's for one configuration (pairedPromptRatioInterval). */
export function ttftRatioInterval(
  a: readonly PerfRequestRecord[],
  b: readonly PerfRequestRecord[],
  samples = BOOTSTRAP_SAMPLES,
  seed = BOOTSTRAP_SEED,
): readonly [number, number] | null {
  // As aggregateConfig takes it: the TTFTs of requests that produced a token.
  const ttfts = (requests: readonly PerfRequestRecord[]) => requests.filter((r) => r.tokens > 0 && r.ttftMs >= 0).map((r) => r.ttftMs);
  // One buffer for every resample: a typed array sorts numbers without a comparator, 20,000 times a configuration.
  let buffer = new Float64Array(64);
  const median = (drawn: readonly number[][]) => {
    let n = 0;
    for (const d of drawn) n += d.length;
    if (n === 0) return null;
    if (buffer.length < n) buffer = new Float64Array(n);
    let i = 0;
    for (const d of drawn) for (const x of d) buffer[i++] = x;
    const sorted = buffer.subarray(0, n).sort();
    const mid = (n - 1) / 2;
    return (sorted[Math.floor(mid)]! + sorted[Math.ceil(mid)]!) / 2;
  };
  return pairedPromptRatioInterval(a, b, ttfts, median, samples, seed);
}

/** A configuration's pooled decode rate over full residency's in the same campaign. */
export interface ResidencyRatio {
  readonly decodeRatio: number;
  /** Its 95% interval (decodeRatioInterval); null under two prompts in common. */
  readonly decodeRatioCi95: readonly [number, number] | null;
}

/**
 * Each configuration's decode rate over full residency's in the same campaign, the figure an expert budget is judged
 * by: null for full residency itself, in a campaign without it, or where either rate is missing. Its interval is
 * drawn as two campaigns' is (decodeRatioInterval): the configurations ran one after another over the same prompts.
 */
export function ratiosToFullResidency(c: PerfCampaignDetail, samples = BOOTSTRAP_SAMPLES, seed = BOOTSTRAP_SEED): readonly (ResidencyRatio | null)[] {
  const full = c.configs.findIndex((spec) => spec.expertBudgetBytes === null);
  const base = full < 0 ? null : (c.aggregates[full]?.decodeTokensPerSecond ?? null);
  const requestsOf = (i: number) => c.requests.filter((r) => r.config === i);
  const fullRequests = full < 0 ? [] : requestsOf(full);
  return c.configs.map((_, i) => {
    const rate = c.aggregates[i]?.decodeTokensPerSecond ?? null;
    if (i === full || base === null || !(base > 0) || rate === null) return null;
    return { decodeRatio: rate / base, decodeRatioCi95: decodeRatioInterval(fullRequests, requestsOf(i), samples, seed) };
  });
}

/** Compares two campaigns configuration by configuration (their aggregates as stored, matched by label). */
export function compareCampaigns(a: PerfCampaignDetail, b: PerfCampaignDetail): PerfComparison {
  const ratio = (x: number | null | undefined, y: number | null | undefined) => (x != null && y != null && x > 0 ? y / x : null);
  const byLabel = (c: PerfCampaignDetail) => new Map(c.configs.map((spec, i) => [spec.label, i]));
  const aConfigs = byLabel(a);
  const bConfigs = byLabel(b);
  const requestsOf = (c: PerfCampaignDetail, i: number | undefined) => (i === undefined ? [] : c.requests.filter((r) => r.config === i));
  const labels = [...new Set([...aConfigs.keys(), ...bConfigs.keys()])];
  const configs = labels.map((label) => {
    const ia = aConfigs.get(label);
    const ib = bConfigs.get(label);
    const x = ia === undefined ? null : (a.aggregates[ia] ?? null);
    const y = ib === undefined ? null : (b.aggregates[ib] ?? null);
    const decodeRatio = ratio(x?.decodeTokensPerSecond, y?.decodeTokensPerSecond);
    const ttftRatio = ratio(x?.ttftMsP50, y?.ttftMsP50);
    const ra = requestsOf(a, ia);
    const rb = requestsOf(b, ib);
    return {
      label, a: x, b: y, decodeRatio, ttftRatio,
      decodeRatioCi95: decodeRatio === null ? null : decodeRatioInterval(ra, rb),
      ttftRatioCi95: ttftRatio === null ? null : ttftRatioInterval(ra, rb),
    };
  });
  const differences: string[] = [];
  if (a.model.repo !== b.model.repo || a.model.revision !== b.model.revision) {
    differences.push(`other models: ${a.model.repo}@${a.model.revision.slice(0, 7)} and ${b.model.repo}@${b.model.revision.slice(0, 7)}`);
  }
  if (a.model.weights !== b.model.weights) differences.push(`other weights: ${a.model.weights} and ${b.model.weights}`);
  for (const k of ['prompts', 'blocks', 'maxNewTokens', 'warmupTokens'] as const) {
    if (a.settings[k] !== b.settings[k]) differences.push(`other ${k}: ${a.settings[k]} and ${b.settings[k]}`);
  }
  if (a.settings.keys.join(',') !== b.settings.keys.join(',')) differences.push('other prompts');
  return { configs, differences };
}
