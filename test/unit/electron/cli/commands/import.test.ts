import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { run } from '../../../../../electron/cli/commands/import.js';
import { dataLayout } from '../../../../../electron/main/data-dir.js';
import { openDatabase } from '../../../../../electron/main/db/open-database.js';
import { PerfRepo } from '../../../../../electron/main/db/perf-repo.js';
import { writeElsewhereCampaignZip } from '../../main/export/perf-fixtures.js';
import { captureConsole } from '../capture-console.js';

describe('horizon import, a campaign ZIP', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'horizon-cli-import-'));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('stores the campaign in a new data folder, needing no eval assets, and refuses it a second time', async () => {
    const zip = path.join(dir, 'perf-x.zip');
    const elsewhere = await writeElsewhereCampaignZip('perf-x', zip);
    const dataDir = path.join(dir, 'fresh');
    const dbFile = dataLayout.database(dataDir);
    expect(await captureConsole(() => run([zip, '--data-dir', dataDir]))).toEqual({
      code: 0,
      out: `imported campaign perf-x (completed, 1 request, CPU) from ${zip} into ${dbFile}`,
      errOut: '',
    });
    const db = openDatabase(dbFile);
    try {
      expect(new PerfRepo(db).get('perf-x')).toMatchObject({ ...elsewhere.get('perf-x')!, imported: { file: zip } });
    } finally {
      db.close();
    }
    expect(await captureConsole(() => run([zip, '--data-dir', dataDir]))).toMatchObject({
      code: 1,
      errOut: expect.stringMatching(`^horizon import: ${zip}: campaign perf-x is stored already, imported from ${zip} at `),
    });
  });
});
