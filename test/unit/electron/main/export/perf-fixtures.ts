import Database from 'better-sqlite3';

import { migrate } from '../../../../../electron/main/db/open-database.js';
import { PerfRepo } from '../../../../../electron/main/db/perf-repo.js';
import { writePerfZip } from '../../../../../electron/main/export/perf-zip.js';

/**
 * Writes the ZIP of a CPU campaign measured on another machine (its own database): one prompt, one block, one request.
 * Returns that machine's repo, to compare what an import stores with.
 */
export async function writeElsewhereCampaignZip(
  id: string,
  out: string,
  over: { readonly rate?: number; readonly ttftMs?: number; readonly device?: string; readonly maxNewTokens?: number; readonly label?: string } = {},
): Promise<PerfRepo> {
  const db = new Database(':memory:');
  migrate(db);
  const perf = new PerfRepo(db);
  perf.create({
    id, createdAt: '2026-12-06T10:00:00.000Z',
    model: { modelId: 'm@abc/int4-g32', repo: 'o/m', revision: 'a'.repeat(40), weights: 'int4', manifestSha256: 'b'.repeat(64) },
    backend: 'cpu', deviceLabel: over.device ?? 'CPU', peakMemoryScope: null,
    settings: { prompts: 1, blocks: 1, maxNewTokens: over.maxNewTokens ?? 128, warmupTokens: 64, keys: [1000] },
    configs: [{ label: 'full residency', expertBudgetBytes: null, residency: 'host memory' }],
  });
  perf.addRequest(id, {
    config: 0, block: 0, key: 1000, promptTokens: 30, tokens: 128, ttftMs: over.ttftMs ?? 40, decodeTokensPerSecond: over.rate ?? 25, responseMs: 5100,
    peakMemoryBytes: 0, h2dBytes: 0, expertHits: 0, expertMisses: 0, expertEvictions: 0,
  });
  perf.finish(id, 'completed', null, '2026-12-06T10:05:00.000Z');
  if (over.label !== undefined) perf.setLabel(id, over.label);
  await writePerfZip(perf.get(id)!, out, '9.9.9');
  return perf;
}
