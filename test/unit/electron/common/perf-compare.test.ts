import { describe, expect, it } from 'vitest';

import { aggregateConfig, compareCampaigns, type PerfCampaignDetail, type PerfRequestRecord } from '../../../../electron/common/perf-campaign.js';

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
