import { describe, expect, it } from 'vitest';

import {
  aggregateConfig, campaignConfigs, compareCampaigns, decodeRatioInterval, ratiosToFullResidency, ttftRatioInterval, type PerfCampaignDetail, type PerfRequestRecord,
} from '../../../../electron/common/perf-campaign.js';
import { formatCampaign } from '../../../../electron/cli/commands/perf.js';
import { pairedRatioInterval } from '../../../../electron/common/paired-stats.js';

const rec = (over: Partial<PerfRequestRecord>): PerfRequestRecord => ({
  config: 0, block: 0, key: 1000, promptTokens: 10, tokens: 101, ttftMs: 20, decodeTokensPerSecond: 100, responseMs: 1000,
  peakMemoryBytes: 0, h2dBytes: 0, expertHits: 0, expertMisses: 0, expertEvictions: 0, ...over,
});

/** A campaign of the given configurations, each with one request at `rate` tok/s and `ttft` ms. */
function campaign(id: string, configs: readonly { label: string; rate: number; ttft: number }[], over: Partial<PerfCampaignDetail> = {}): PerfCampaignDetail {
  const requests = configs.map((c, i) => rec({ config: i, decodeTokensPerSecond: c.rate, ttftMs: c.ttft }));
  return {
    id, createdAt: '2026-12-06T10:00:00Z', finishedAt: null, status: 'completed', error: null,
    model: { modelId: 'm', repo: 'o/m', revision: 'a'.repeat(40), weights: 'int4', manifestSha256: 'b'.repeat(64) },
    backend: 'cuda', deviceLabel: 'CUDA: GPU', peakMemoryScope: 'process',
    settings: { prompts: 12, blocks: 3, maxNewTokens: 128, warmupTokens: 64, keys: [1000, 1001] },
    configs: configs.map((c) => ({ label: c.label, expertBudgetBytes: null, residency: null })),
    imported: null,
    label: null,
    requests,
    aggregates: configs.map((_, i) => aggregateConfig(requests.filter((r) => r.config === i), false)),
    ...over,
  };
}

describe('compareCampaigns', () => {
  it('pairs configurations by label, B over A, and keeps those only one side measured', () => {
    const a = campaign('a', [{ label: 'full residency', rate: 100, ttft: 40 }, { label: '4 GiB experts', rate: 50, ttft: 80 }]);
    const b = campaign('b', [{ label: 'full residency', rate: 250, ttft: 20 }, { label: '8 GiB experts', rate: 200, ttft: 25 }]);
    const { configs, differences } = compareCampaigns(a, b);
    expect(configs.map((c) => [c.label, c.a?.decodeTokensPerSecond ?? null, c.b?.decodeTokensPerSecond ?? null, c.decodeRatio, c.ttftRatio])).toEqual([
      ['full residency', 100, 250, 2.5, 0.5],
      ['4 GiB experts', 50, null, null, null],
      ['8 GiB experts', null, 200, null, null],
    ]);
    expect(differences).toEqual([]);
  });

  it('gives no ratio over a configuration without a rate', () => {
    const a = campaign('a', [{ label: 'full residency', rate: 0, ttft: 40 }]);
    const b = campaign('b', [{ label: 'full residency', rate: 120, ttft: 30 }]);
    expect(compareCampaigns(a, b).configs[0]).toMatchObject({ decodeRatio: null, ttftRatio: 0.75 });
  });

  it('says each way two campaigns did not measure the same thing', () => {
    const a = campaign('a', [{ label: 'full residency', rate: 100, ttft: 40 }]);
    const b = campaign('b', [{ label: 'full residency', rate: 100, ttft: 40 }], {
      model: { modelId: 'm2', repo: 'o/other', revision: 'c'.repeat(40), weights: 'bf16', manifestSha256: 'd'.repeat(64) },
      settings: { prompts: 12, blocks: 2, maxNewTokens: 256, warmupTokens: 64, keys: [1000, 1005] },
    });
    expect(compareCampaigns(a, b).differences).toEqual([
      'other models: o/m@aaaaaaa and o/other@ccccccc',
      'other weights: int4 and bf16',
      'other blocks: 3 and 2',
      'other maxNewTokens: 128 and 256',
      'other prompts',
    ]);
  });
});

describe('decodeRatioInterval', () => {
  // 100 decode tokens a request (101 generated); each key's rate given per block.
  const requests = (rates: Record<number, readonly number[]>) =>
    Object.entries(rates).flatMap(([key, perBlock]) => perBlock.map((rate, block) => rec({ key: Number(key), block, decodeTokensPerSecond: rate })));

  it('is the exact ratio when every prompt moves by it', () => {
    const a = requests({ 1000: [100, 100], 1001: [50, 50], 1005: [80, 80] });
    const b = requests({ 1000: [150, 150], 1001: [75, 75], 1005: [120, 120] });
    const [low, high] = decodeRatioInterval(a, b)!;
    expect(low).toBeCloseTo(1.5, 12);
    expect(high).toBeCloseTo(1.5, 12);
  });

  it('spans the spread of the per-prompt ratios, around the pooled one, the same on every call', () => {
    // Per-prompt ratios 1.0, 1.2 and 0.9 (the pooled one between): every resample's ratio lies between the extremes.
    const a = requests({ 1000: [100, 100, 100], 1001: [100, 100, 100], 1005: [100, 100, 100], 1012: [100, 100, 100] });
    const b = requests({ 1000: [100, 100, 100], 1001: [120, 120, 120], 1005: [90, 90, 90], 1012: [105, 105, 105] });
    const ci = decodeRatioInterval(a, b)!;
    const pooled = aggregateConfig(b, false).decodeTokensPerSecond! / aggregateConfig(a, false).decodeTokensPerSecond!;
    expect(ci[0]).toBeLessThan(pooled);
    expect(ci[1]).toBeGreaterThan(pooled);
    expect(ci[0]).toBeGreaterThanOrEqual(0.9);
    expect(ci[1]).toBeLessThanOrEqual(1.2);
    expect(decodeRatioInterval(a, b)).toEqual(ci);
  });

  // Twelve prompts at 60..170 tok/s in A, each the same in its three blocks.
  const keys = Array.from({ length: 12 }, (_, i) => 1000 + i);
  const perBlock = (rate: (key: number, block: number) => number) =>
    Object.fromEntries(keys.map((k, i) => [k, [0, 1, 2].map((block) => rate(i, block))]));
  const pooled = (drawn: readonly { tokens: number; seconds: number }[]) => {
    const tokens = drawn.reduce((s, d) => s + d.tokens, 0);
    const seconds = drawn.reduce((s, d) => s + d.seconds, 0);
    return seconds > 0 ? tokens / seconds : null;
  };
  // Each prompt's decode tokens and seconds over all its blocks: the draw of prompts alone (pairedRatioInterval).
  const totals = (rates: Record<number, readonly number[]>) =>
    keys.map((k) => ({ tokens: 100 * rates[k]!.length, seconds: rates[k]!.reduce((s, r) => s + 100 / r, 0) }));

  it('is the draw of prompts alone when each prompt ran alike in every block', () => {
    const ra = perBlock((i) => 60 + 10 * i);
    const rb = perBlock((i) => (60 + 10 * i) * (i % 3 === 0 ? 1.3 : 0.95));
    const ci = decodeRatioInterval(requests(ra), requests(rb))!;
    expect(ci).toEqual(pairedRatioInterval(totals(ra), totals(rb), pooled));
    expect(ci[0]).toBeLessThan(ci[1]);
  });

  it('widens with a block one side ran slow throughout, which a draw of prompts alone keeps out', () => {
    const ra = perBlock((i) => 60 + 10 * i);
    // B: 10% faster in blocks 0 and 1, 20% slower in block 2 (a machine slowed for a whole block).
    const rb = perBlock((i, block) => (60 + 10 * i) * (block === 2 ? 0.8 : 1.1));
    const promptsAlone = pairedRatioInterval(totals(ra), totals(rb), pooled)!;
    // Every prompt's ratio over its three blocks is the same, so drawing prompts alone gives no spread at all.
    expect(promptsAlone[1] - promptsAlone[0]).toBeLessThan(1e-12);
    const [low, high] = decodeRatioInterval(requests(ra), requests(rb))!;
    // B's three blocks drawn all as block 2 (1 draw in 27, over 2.5%) give 0.8; none of block 2 (8 in 27) 1.1.
    expect(low).toBeCloseTo(0.8, 12);
    expect(high).toBeCloseTo(1.1, 12);
    expect(low).toBeLessThan(promptsAlone[0]);
    expect(high).toBeGreaterThan(promptsAlone[1]);
  });

  it("leaves a cancelled campaign's unfinished block out of the interval, and takes a side with no whole block whole", () => {
    const ra = perBlock((i) => 60 + 10 * i);
    const rb = perBlock((i, block) => (60 + 10 * i) * (block === 2 ? 0.8 : 1.1));
    const b = requests(rb).filter((r) => r.block < 2);
    // B cancelled three prompts into its block 2: that block's requests change nothing.
    const cancelled = requests(rb).filter((r) => r.block < 2 || r.key < 1003);
    expect(decodeRatioInterval(requests(ra), cancelled)).toEqual(decodeRatioInterval(requests(ra), b));
    // B cancelled in its first block, after four prompts: the common prompts' requests as one block, so only A's
    // blocks and the prompts are drawn: with A's blocks alike, the draw of prompts alone.
    const early = requests(rb).filter((r) => r.block === 0 && r.key < 1004);
    const common = keys.slice(0, 4);
    const sub = (rates: Record<number, readonly number[]>, blocks: number) =>
      common.map((k) => ({ tokens: 100 * blocks, seconds: rates[k]!.slice(0, blocks).reduce((s, r) => s + 100 / r, 0) }));
    expect(decodeRatioInterval(requests(ra), early)).toEqual(pairedRatioInterval(sub(ra, 3), sub(rb, 1), pooled));
  });

  it('pairs prompts only: a prompt one side did not measure is left out, and fewer than two give none', () => {
    const a = requests({ 1000: [100], 1001: [50] });
    const b = requests({ 1000: [200], 1001: [100], 1005: [1] });
    expect(decodeRatioInterval(a, b)).toEqual([2, 2]);
    expect(decodeRatioInterval(requests({ 1000: [100] }), requests({ 1000: [200] }))).toBeNull();
    expect(decodeRatioInterval(requests({ 1000: [100], 1001: [0] }), requests({ 1000: [200], 1001: [100] }))).toBeNull();
  });

  it('comes with each configuration both campaigns measured', () => {
    const a = campaign('a', [{ label: 'full residency', rate: 100, ttft: 40 }]);
    const b = campaign('b', [{ label: 'full residency', rate: 120, ttft: 30 }]);
    // One prompt each: no interval.
    expect(compareCampaigns(a, b).configs[0]).toMatchObject({ decodeRatio: 1.2, decodeRatioCi95: null });
    const two = (c: PerfCampaignDetail, rate: number) => {
      const reqs = [rec({ key: 1000, decodeTokensPerSecond: rate }), rec({ key: 1001, decodeTokensPerSecond: rate })];
      return { ...c, requests: reqs, aggregates: [aggregateConfig(reqs, false)] };
    };
    const [config] = compareCampaigns(two(a, 100), two(b, 120)).configs;
    expect(config!.decodeRatioCi95![0]).toBeCloseTo(1.2, 12);
    expect(config!.decodeRatioCi95![1]).toBeCloseTo(1.2, 12);
  });
});

describe('ttftRatioInterval', () => {
  const requests = (ttfts: Record<number, readonly number[]>) =>
    Object.entries(ttfts).flatMap(([key, perBlock]) => perBlock.map((ttftMs, block) => rec({ key: Number(key), block, ttftMs })));

  it("is the exact ratio when every request's TTFT moves by it, and lies within the drawn medians' reach", () => {
    expect(ttftRatioInterval(requests({ 1000: [40, 40], 1001: [20, 20] }), requests({ 1000: [20, 20], 1001: [10, 10] }))).toEqual([0.5, 0.5]);
    // Blocks 10% apart on both sides: each side's blocks are drawn on their own, so the halving shows with the blocks'
    // spread around it (B's faster block against A's slower: 20 / 44; the other way: 22 / 40).
    const blocks = ttftRatioInterval(requests({ 1000: [40, 44], 1001: [20, 22] }), requests({ 1000: [20, 22], 1001: [10, 11] }))!;
    expect(blocks[0]).toBeLessThan(0.5);
    expect(blocks[1]).toBeGreaterThan(0.5);
    expect(blocks[0]).toBeGreaterThanOrEqual(20 / 44 - 1e-12);
    expect(blocks[1]).toBeLessThanOrEqual(22 / 40 + 1e-12);
    // A's TTFTs all 40 ms; B's per prompt 30, 40 or 50 ms: every resampled median is one of those, so the ratio is 0.75..1.25.
    const ci = ttftRatioInterval(requests({ 1000: [40, 40], 1001: [40, 40], 1005: [40, 40] }), requests({ 1000: [30, 30], 1001: [40, 40], 1005: [50, 50] }))!;
    expect(ci[0]).toBeGreaterThanOrEqual(0.75);
    expect(ci[1]).toBeLessThanOrEqual(1.25);
    expect(ci[0]).toBeLessThan(ci[1]);
  });

  it('leaves out requests without a token, and gives none for one prompt in common', () => {
    const a = [...requests({ 1000: [40], 1001: [20] }), rec({ key: 1001, block: 1, tokens: 0, ttftMs: 1 })];
    expect(ttftRatioInterval(a, requests({ 1000: [80], 1001: [40] }))).toEqual([2, 2]);
    expect(ttftRatioInterval(requests({ 1000: [40] }), requests({ 1000: [20] }))).toBeNull();
  });
});

describe('ratiosToFullResidency', () => {
  // Full residency and two budgets over three prompts and two blocks; the 2 GiB budget decodes at 0.4x on every prompt,
  // the 4 GiB one at 0.6x on two prompts and 0.9x on the third.
  const configs = campaignConfigs([2 * 2 ** 30, 4 * 2 ** 30]);
  const rates = [
    (_k: number) => 100,
    (_k: number) => 40,
    (k: number) => (k === 1002 ? 90 : 60),
  ];
  const requests = configs.flatMap((_, config) =>
    [0, 1].flatMap((block) => [1000, 1001, 1002].map((key) => rec({ config, block, key, decodeTokensPerSecond: rates[config]!(key) }))),
  );
  const detail = (over: Partial<PerfCampaignDetail> = {}): PerfCampaignDetail => {
    const base = campaign('c', [{ label: 'x', rate: 1, ttft: 1 }]);
    const c = { ...base, configs: configs.map((spec) => ({ ...spec, residency: null })), requests, ...over };
    return { ...c, aggregates: c.configs.map((_, i) => aggregateConfig(c.requests.filter((r) => r.config === i), false)) };
  };

  it("gives each budget's decode rate over full residency's, with the interval two campaigns' comparison gives", () => {
    const [full, two, four] = ratiosToFullResidency(detail());
    expect(full).toBeNull();
    expect(two!.decodeRatio).toBeCloseTo(0.4, 12);
    expect(two!.decodeRatioCi95![0]).toBeCloseTo(0.4, 12);
    expect(two!.decodeRatioCi95![1]).toBeCloseTo(0.4, 12);
    // Pooled: 600 decode tokens over 2 x 100 x (1/60 + 1/60 + 1/90) s, against 100 tok/s.
    expect(four!.decodeRatio).toBeCloseTo(600 / (200 * (2 / 60 + 1 / 90)) / 100, 12);
    const ci = four!.decodeRatioCi95!;
    expect(ci).toEqual(decodeRatioInterval(requests.filter((r) => r.config === 0), requests.filter((r) => r.config === 2)));
    expect(ci[0]).toBeLessThan(four!.decodeRatio);
    expect(ci[1]).toBeGreaterThan(four!.decodeRatio);
    expect(ci[0]).toBeGreaterThanOrEqual(0.6 - 1e-12);
    expect(ci[1]).toBeLessThanOrEqual(0.9 + 1e-12);
  });

  it('gives none without full residency, or where a rate is missing', () => {
    const noFull = detail({ configs: configs.map((spec) => ({ ...spec, expertBudgetBytes: spec.expertBudgetBytes ?? 2 ** 30, residency: null })) });
    expect(ratiosToFullResidency(noFull)).toEqual([null, null, null]);
    const stalled = detail({ requests: requests.map((r) => (r.config === 0 ? { ...r, tokens: 1 } : r)) });
    expect(ratiosToFullResidency(stalled)).toEqual([null, null, null]);
    // One configuration (a CPU campaign): nothing to compare.
    const cpu = campaign('cpu', [{ label: 'full residency', rate: 30, ttft: 90 }]);
    expect(ratiosToFullResidency({ ...cpu, configs: campaignConfigs([]).map((spec) => ({ ...spec, residency: null })) })).toEqual([null]);
  });

  it('is printed under the campaign table by horizon perf and show --campaign', () => {
    const text = formatCampaign(detail());
    const [, two, four] = ratiosToFullResidency(detail());
    const line = text.split('\n').find((l) => l.startsWith("  decode rate over full residency's: "));
    expect(line).toBe(
      `  decode rate over full residency's: 2 GiB experts 0.40x (95% CI 0.40-0.40x); 4 GiB experts ${four!.decodeRatio.toFixed(2)}x ` +
        `(95% CI ${four!.decodeRatioCi95![0].toFixed(2)}-${four!.decodeRatioCi95![1].toFixed(2)}x)`,
    );
    expect(two!.decodeRatio.toFixed(2)).toBe('0.40');
    expect(formatCampaign(campaign('cpu', [{ label: 'full residency', rate: 30, ttft: 90 }]))).not.toContain('over full residency');
  });
});
