import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { campaignConfigs, type PerfRequestRecord } from '../../../../../electron/common/perf-campaign.js';
import { migrate } from '../../../../../electron/main/db/open-database.js';
import { PerfRepo } from '../../../../../electron/main/db/perf-repo.js';
import { importPerfZip } from '../../../../../electron/main/export/import-perf-zip.js';
import { writePerfZip } from '../../../../../electron/main/export/perf-zip.js';
import { readZipEntries } from '../../../../../electron/main/export/verify-result-zip.js';
import { refused, rehash, rezip, sha256 } from './zip-fixtures.js';

const NOW = '2026-12-06T19:30:00.000Z';

function freshDb() {
  const db = new Database(':memory:');
  migrate(db);
  return { db, perf: new PerfRepo(db) };
}

describe('importing a campaign ZIP', () => {
  let dir: string;
  let zip: string;
  let source: ReturnType<typeof freshDb>;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'horizon-import-perf-'));
    // A CUDA campaign of two configurations over two prompts, one block, as another machine would export it.
    source = freshDb();
    const configs = campaignConfigs([4 * 2 ** 30]).map((c, i) => ({ ...c, residency: i === 0 ? 'all 64 experts a layer' : '32 of 64 experts a layer' }));
    source.perf.create({
      id: 'perf-20261206-ab12', createdAt: '2026-12-06T10:00:00.000Z',
      model: { modelId: 'm@abc/int4-g32', repo: 'o/m', revision: 'a'.repeat(40), weights: 'int4', manifestSha256: 'b'.repeat(64) },
      backend: 'cuda', deviceLabel: 'CUDA: NVIDIA H200', peakMemoryScope: 'process',
      settings: { prompts: 2, blocks: 1, maxNewTokens: 128, warmupTokens: 64, keys: [1000, 1001] }, configs,
    });
    let i = 0;
    for (const config of [0, 1]) {
      for (const key of [1000, 1001]) {
        const r: PerfRequestRecord = {
          config, block: 0, key, promptTokens: 30 + key - 1000, tokens: 128, ttftMs: 20 + i, decodeTokensPerSecond: 200 - 40 * config - i,
          responseMs: 700 + 10 * i, peakMemoryBytes: 9e9 - config * 2e9, h2dBytes: config * 1e8, expertHits: 900 + i, expertMisses: 40 * config, expertEvictions: 30 * config,
        };
        source.perf.addRequest('perf-20261206-ab12', r);
        i++;
      }
    }
    source.perf.finish('perf-20261206-ab12', 'completed', null, '2026-12-06T10:05:00.000Z');
    zip = path.join(dir, 'perf.zip');
    await writePerfZip(source.perf.get('perf-20261206-ab12')!, zip, '9.9.9');
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('stores the campaign as the ZIP recorded it, and exports it again to the same bytes', async () => {
    const target = freshDb();
    const c = await importPerfZip(zip, target, NOW);
    expect(c).toEqual({ ...source.perf.get('perf-20261206-ab12')!, imported: { file: zip, sha256: sha256(readFileSync(zip)), importedAt: NOW } });
    expect([target.perf.requestCount('perf-20261206-ab12'), target.perf.requestCount('perf-none')]).toEqual([4, 0]);
    const again = path.join(dir, 'again.zip');
    expect((await writePerfZip(c, again, '9.9.9')).sha256).toBe(sha256(readFileSync(zip)));
  });

  it("carries a campaign's label: in campaign.json only when it has one, imported, and exported again to the same bytes", async () => {
    const plain = JSON.parse((await readZipEntries(zip)).get('campaign.json')!.toString()) as Record<string, unknown>;
    expect(plain).not.toHaveProperty('label');
    const labelled = freshDb();
    await importPerfZip(zip, labelled, NOW);
    labelled.perf.setLabel('perf-20261206-ab12', 'H200, driver 580');
    const first = path.join(dir, 'labelled.zip');
    await writePerfZip(labelled.perf.get('perf-20261206-ab12')!, first, '9.9.9');
    const file = JSON.parse((await readZipEntries(first)).get('campaign.json')!.toString()) as Record<string, unknown>;
    expect(file.label).toBe('H200, driver 580');
    // Only the label differs from the ZIP without one.
    const { label: _label, ...rest } = file;
    expect(rest).toEqual(plain);

    const target = freshDb();
    expect((await importPerfZip(first, target, NOW)).label).toBe('H200, driver 580');
    const again = path.join(dir, 'labelled-again.zip');
    expect((await writePerfZip(target.perf.get('perf-20261206-ab12')!, again, '9.9.9')).sha256).toBe(sha256(readFileSync(first)));

    const entries = await readZipEntries(first);
    entries.set('campaign.json', Buffer.from(JSON.stringify({ ...file, label: 'x'.repeat(81) })));
    rehash(entries);
    const odd = path.join(dir, 'odd-label.zip');
    await rezip(entries, odd);
    const fresh = freshDb();
    await refused(
      importPerfZip(odd, fresh),
      'malformed',
      `${odd}: verifies, but its campaign cannot be stored: campaign.json label is "${'x'.repeat(59)}, not a label (one line of at most 80 characters) or absent`,
    );
    expect(fresh.perf.list()).toEqual([]);
  });

  it('refuses a campaign stored already, saying where it came from', async () => {
    const target = freshDb();
    await importPerfZip(zip, target, NOW);
    await refused(importPerfZip(zip, target), 'duplicate', `${zip}: campaign perf-20261206-ab12 is stored already, imported from ${zip} at ${NOW}`);
    await refused(importPerfZip(zip, source), 'duplicate', `${zip}: campaign perf-20261206-ab12 is stored already: it was measured on this machine`);
    expect(target.perf.get('perf-20261206-ab12')!.requests).toHaveLength(4);
  });

  it('refuses a ZIP that does not verify and one that is not a campaign, storing nothing', async () => {
    const entries = await readZipEntries(zip);
    const lines = entries.get('requests.jsonl')!.toString().split('\n');
    lines[0] = lines[0]!.replace('"decodeTokensPerSecond":200', '"decodeTokensPerSecond":400');
    entries.set('requests.jsonl', Buffer.from(lines.join('\n')));
    rehash(entries);
    const faster = path.join(dir, 'faster.zip');
    await rezip(entries, faster);
    const target = freshDb();
    // Full residency's pooled rate: 127 tokens after the first at 200 and 199 tok/s, then with the first at 400.
    const pooled = (a: number, b: number) => 254 / (127 / a + 127 / b);
    await refused(
      importPerfZip(faster, target),
      'not-verified',
      `${faster}: does not verify, so it is not imported (1 problem; the first: campaign.json: full residency decodeTokensPerSecond is ` +
        `${JSON.stringify(pooled(200, 199))}, the requests give ${JSON.stringify(pooled(400, 199))})`,
    );
    const other = new Map(entries);
    other.set('manifest.json', Buffer.from(JSON.stringify({ format: 'horizon-result-v2', files: [] })));
    const notCampaign = path.join(dir, 'not-campaign.zip');
    await rezip(other, notCampaign);
    await refused(importPerfZip(notCampaign, target), 'other-kind', `${notCampaign}: is not a performance campaign ZIP`);
    expect(target.perf.list()).toEqual([]);
  });

  it('refuses a verifying campaign the database cannot hold, naming every field', async () => {
    const entries = await readZipEntries(zip);
    const c = JSON.parse(entries.get('campaign.json')!.toString()) as Record<string, unknown>;
    const manifest = JSON.parse(entries.get('manifest.json')!.toString()) as Record<string, unknown>;
    // Fields the verifier does not read; the manifest's campaignId follows the id, as a forger would keep it.
    c.id = '../campaign';
    manifest.campaignId = '../campaign';
    c.status = 'running';
    c.model = { ...(c.model as object), weights: 'fp8' };
    c.configs = [{ label: 'full residency', expertBudgetBytes: -1, residency: null }, ...(c.configs as object[]).slice(1)];
    entries.set('campaign.json', Buffer.from(JSON.stringify(c)));
    entries.set('manifest.json', Buffer.from(JSON.stringify(manifest)));
    rehash(entries);
    const odd = path.join(dir, 'odd.zip');
    await rezip(entries, odd);
    const target = freshDb();
    await refused(
      importPerfZip(odd, target),
      'malformed',
      `${odd}: verifies, but its campaign cannot be stored: campaign.json id is "../campaign", not a campaign id (perf- then letters, digits, . _ + -); ` +
        'campaign.json status is "running", not completed, failed or cancelled; campaign.json model.weights is "fp8", not int4 or bf16; ' +
        'campaign.json configs is [{"label":"full residency","expertBudgetBytes":-1,"residency, not a list of configurations (label, ' +
        'expertBudgetBytes, residency)',
    );
    expect(target.perf.list()).toEqual([]);
  });

  it("refuses a campaign named as runs are, whose ZIP in exports/ would take a run's name", async () => {
    const entries = await readZipEntries(zip);
    const c = JSON.parse(entries.get('campaign.json')!.toString()) as Record<string, unknown>;
    const manifest = JSON.parse(entries.get('manifest.json')!.toString()) as Record<string, unknown>;
    c.id = '20261206T205311-c5b042';
    manifest.campaignId = c.id;
    entries.set('campaign.json', Buffer.from(JSON.stringify(c)));
    entries.set('manifest.json', Buffer.from(JSON.stringify(manifest)));
    rehash(entries);
    const odd = path.join(dir, 'run-named.zip');
    await rezip(entries, odd);
    const target = freshDb();
    await refused(
      importPerfZip(odd, target),
      'malformed',
      `${odd}: verifies, but its campaign cannot be stored: campaign.json id is "20261206T205311-c5b042", not a campaign id (perf- then letters, digits, . _ + -)`,
    );
    expect(target.perf.list()).toEqual([]);
  });
});
