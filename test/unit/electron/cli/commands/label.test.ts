import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { run } from '../../../../../electron/cli/commands/label.js';
import { main } from '../../../../../electron/cli/index.js';
import { dataLayout } from '../../../../../electron/main/data-dir.js';
import { openDatabase } from '../../../../../electron/main/db/open-database.js';
import { PerfRepo } from '../../../../../electron/main/db/perf-repo.js';
import { RunRepo } from '../../../../../electron/main/db/run-repo.js';
import { importPerfZip } from '../../../../../electron/main/export/import-perf-zip.js';
import { loadTextTools } from '../../../../../evals/ifeval/node/load-text-tools.js';
import { writeElsewhereCampaignZip } from '../../main/export/perf-fixtures.js';
import { storeRun } from '../../main/export/zip-fixtures.js';
import { captureConsole } from '../capture-console.js';

const SHARED = path.resolve(import.meta.dirname, '..', '..', '..', '..', '..', '..', 'shared');

const capture = (args: string[]) => captureConsole(() => run(args));

describe('horizon label', () => {
  let dataDir: string;
  const labelOf = (runId: string): string | null | undefined => {
    const db = openDatabase(dataLayout.database(dataDir));
    try {
      return new RunRepo(db).get(runId)?.label;
    } finally {
      db.close();
    }
  };

  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'horizon-cli-label-'));
    const tools = await loadTextTools({ punktDir: path.join(SHARED, 'nltk', 'punkt_english') });
    const official = readFileSync(path.join(SHARED, 'ifeval', 'input_data.jsonl'), 'utf8');
    const db = openDatabase(dataLayout.database(dataDir));
    storeRun(db, 'run-a', official, 2, ['One answer.'], tools, 'completed');
    storeRun(db, 'run-live', official, 2, ['One answer.'], tools, 'running');
    db.close();
  });
  afterAll(() => rm(dataDir, { recursive: true, force: true }));

  it('is listed by horizon --help', async () => {
    const r = await captureConsole(() => main(['--help']));
    expect(r.out).toMatch(/^ {2}label {6}label a stored run or campaign \("baseline g32"\), or clear its label$/m);
  });

  it('labels a run, running or not, trimmed, then replaces and clears the label', async () => {
    expect(await capture(['run-a', '  baseline g32 ', '--data-dir', dataDir])).toEqual({ code: 0, out: 'labelled run run-a "baseline g32"', errOut: '' });
    expect(labelOf('run-a')).toBe('baseline g32');
    expect(await capture(['run-live', 'still going', '--data-dir', dataDir])).toMatchObject({ code: 0 });
    expect(labelOf('run-live')).toBe('still going');
    expect(await capture(['run-a', 'BF16 reference', '--data-dir', dataDir])).toMatchObject({ code: 0 });
    expect(labelOf('run-a')).toBe('BF16 reference');
    expect(await capture(['run-a', '--clear', '--data-dir', dataDir])).toEqual({ code: 0, out: 'cleared the label of run run-a', errOut: '' });
    expect(labelOf('run-a')).toBeNull();
  });

  it('labels a campaign with --campaign, and clears it', async () => {
    const zip = path.join(dataDir, 'perf-x.zip');
    await writeElsewhereCampaignZip('perf-x', zip);
    const db = openDatabase(dataLayout.database(dataDir));
    try {
      await importPerfZip(zip, { perf: new PerfRepo(db), db });
    } finally {
      db.close();
    }
    const campaignLabel = () => {
      const d = openDatabase(dataLayout.database(dataDir));
      try {
        return new PerfRepo(d).get('perf-x')?.label;
      } finally {
        d.close();
      }
    };
    expect(await capture(['--campaign', 'perf-x', 'RTX 4090, driver 580', '--data-dir', dataDir])).toEqual({
      code: 0, out: 'labelled campaign perf-x "RTX 4090, driver 580"', errOut: '',
    });
    expect(campaignLabel()).toBe('RTX 4090, driver 580');
    // A run id is not a campaign's, and the other way round.
    expect(await capture(['--campaign', 'run-a', 'x', '--data-dir', dataDir])).toMatchObject({ code: 1, errOut: expect.stringMatching(/^horizon label: campaign run-a not found in /) });
    expect(await capture(['perf-x', 'x', '--data-dir', dataDir])).toMatchObject({ code: 1, errOut: expect.stringMatching(/^horizon label: run perf-x not found in /) });
    expect(await capture(['--campaign', 'perf-x', '--clear', '--data-dir', dataDir])).toEqual({ code: 0, out: 'cleared the label of campaign perf-x', errOut: '' });
    expect(campaignLabel()).toBeNull();
  });

  it('refuses a bad label, a missing run or database, and a muddled command line, changing nothing', async () => {
    await capture(['run-a', 'kept', '--data-dir', dataDir]);
    const refused = [
      [['run-a', 'x'.repeat(81), '--data-dir', dataDir], 2, /^horizon label: A label has at most 80 characters \(this one has 81\)\./],
      [['run-a', 'two\nlines', '--data-dir', dataDir], 2, /^horizon label: A label is one line of text, without control characters\./],
      [['run-a', '   ', '--data-dir', dataDir], 2, /^horizon label: TEXT is empty; --clear removes a label/],
      [['run-a', '--data-dir', dataDir], 2, /^horizon label: give one RUN_ID and its TEXT \(quoted\), or --clear/],
      [['run-a', 'x', '--clear', '--data-dir', dataDir], 2, /^horizon label: give one RUN_ID with --clear, and no TEXT/],
      [['run-a', 'x', 'y', '--data-dir', dataDir], 2, /^horizon label: give one RUN_ID and its TEXT/],
      [['run-nope', 'x', '--data-dir', dataDir], 1, /^horizon label: run run-nope not found in .* \(see horizon export --list\)$/],
      [['run-a', 'x', '--data-dir', path.join(dataDir, 'mistyped')], 1, /no database at/],
    ] as const;
    for (const [args, code, errOut] of refused) {
      expect(await capture([...args])).toMatchObject({ code, errOut: expect.stringMatching(errOut) });
    }
    expect(labelOf('run-a')).toBe('kept');
  });
});
