import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { formatCampaignComparison, run } from '../../../../../electron/cli/commands/compare.js';
import { dataLayout } from '../../../../../electron/main/data-dir.js';
import { openDatabase } from '../../../../../electron/main/db/open-database.js';
import { importPerfZip } from '../../../../../electron/main/export/import-perf-zip.js';
import { PerfRepo } from '../../../../../electron/main/db/perf-repo.js';
import { writeElsewhereCampaignZip } from '../../main/export/perf-fixtures.js';
import { captureConsole } from '../capture-console.js';

describe('horizon compare with campaigns', () => {
  let dir: string;
  let dataDir: string;
  const zip = (name: string) => path.join(dir, `${name}.zip`);

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'horizon-compare-perf-'));
    dataDir = path.join(dir, 'data');
    await writeElsewhereCampaignZip('perf-here', zip('here'));
    await writeElsewhereCampaignZip('perf-4090', zip('4090'), { rate: 100, ttftMs: 10, device: 'CUDA: NVIDIA RTX 4090', label: 'RTX 4090 run' });
    await writeElsewhereCampaignZip('perf-long', zip('long'), { maxNewTokens: 256 });
    // perf-here is stored in the data folder, as one measured here would be.
    const db = openDatabase(dataLayout.database(dataDir));
    try {
      await importPerfZip(zip('here'), { perf: new PerfRepo(db), db });
    } finally {
      db.close();
    }
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('puts each configuration side by side, B over A, from a stored campaign and a ZIP', async () => {
    const r = await captureConsole(() => run(['perf-here', zip('4090'), '--data-dir', dataDir]));
    expect(r).toEqual({
      code: 0,
      errOut: '',
      out: [
        'A perf-here (CPU)  ->  B perf-4090 "RTX 4090 run" (CUDA: NVIDIA RTX 4090)',
        '  configuration        decode A       decode B         B/A (95%)     TTFT p50 A     TTFT p50 B         B/A (95%)',
        // One prompt each: no interval.
        '  full residency     25.0 tok/s    100.0 tok/s             4.00x          40 ms          10 ms             0.25x',
      ].join('\n'),
    });
    const json = await captureConsole(() => run([zip('here'), zip('4090'), '--json', '--data-dir', dataDir]));
    expect(JSON.parse(json.out)).toMatchObject({ campaignA: 'perf-here', campaignB: 'perf-4090', labelA: null, labelB: 'RTX 4090 run', configs: [{ label: 'full residency', decodeRatio: 4, ttftRatio: 0.25 }], differences: [] });
  });

  it('says when the two did not measure the same thing, and refuses an unknown id', async () => {
    const r = await captureConsole(() => run(['perf-here', zip('long'), '--data-dir', dataDir]));
    expect(r.out.split('\n').at(-1)).toBe('not like for like: other maxNewTokens: 128 and 256');
    expect(await captureConsole(() => run(['perf-here', 'perf-nope', '--data-dir', dataDir]))).toMatchObject({
      code: 1,
      errOut: `horizon compare: no run or campaign perf-nope in ${dataLayout.database(dataDir)} (see horizon export --list)`,
    });
    expect(await captureConsole(() => run(['perf-here', zip('4090'), '--key', '1000', '--data-dir', dataDir]))).toMatchObject({
      code: 2,
      errOut: expect.stringMatching(/^horizon compare: --key compares two runs' responses; campaigns have none\n/),
    });
  });

  it("prints each ratio's 95% interval where there is one", () => {
    const campaign = { id: 'perf-a', label: null, deviceLabel: 'CPU' } as unknown as Parameters<typeof formatCampaignComparison>[0];
    const aggregate = { decodeTokensPerSecond: 100, ttftMsP50: 40 } as unknown as NonNullable<Parameters<typeof formatCampaignComparison>[2]['configs'][number]['a']>;
    const out = formatCampaignComparison(campaign, { ...campaign, id: 'perf-b' }, {
      configs: [{ label: 'full residency', a: aggregate, b: { ...aggregate, decodeTokensPerSecond: 110 }, decodeRatio: 1.1, decodeRatioCi95: [1.034, 1.171], ttftRatio: 1, ttftRatioCi95: [0.95, 1.05] }],
      differences: [],
    });
    expect(out.split('\n')[2]).toBe('  full residency    100.0 tok/s    110.0 tok/s   1.10x 1.03-1.17          40 ms          40 ms   1.00x 0.95-1.05');
  });
});

