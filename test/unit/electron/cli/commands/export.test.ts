import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { run } from '../../../../../electron/cli/commands/export.js';
import { dataLayout, INTERRUPTED_RUN } from '../../../../../electron/main/data-dir.js';
import { openDatabase } from '../../../../../electron/main/db/open-database.js';
import { RunRepo } from '../../../../../electron/main/db/run-repo.js';
import { loadTextTools } from '../../../../../evals/ifeval/node/load-text-tools.js';
import type { TextTools } from '../../../../../evals/ifeval/text/text-tools.js';
import { storeRun } from '../../main/export/zip-fixtures.js';
import { captureConsole } from '../capture-console.js';

const SHARED = path.resolve(import.meta.dirname, '..', '..', '..', '..', '..', '..', 'shared');

const capture = (args: string[]) => captureConsole(() => run(args));

describe('horizon export', () => {
  let dataDir: string;
  let tools: TextTools;
  const official = readFileSync(path.join(SHARED, 'ifeval', 'input_data.jsonl'), 'utf8');

  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'horizon-cli-export-'));
    tools = await loadTextTools({ punktDir: path.join(SHARED, 'nltk', 'punkt_english') });
    const db = openDatabase(dataLayout.database(dataDir));
    storeRun(db, 'run-live', official, 4, ['One answer.'], tools, 'running');
    storeRun(db, 'run-part', official, 3, ['One answer.', 'Two answers.'], tools, 'cancelled');
    db.close();
  });
  afterAll(() => rm(dataDir, { recursive: true, force: true }));

  it('refuses a run still running in a live process, writing nothing', async () => {
    const lock = path.join(dataDir, '.runmap.lock');
    await writeFile(lock, String(process.ppid));
    try {
      const r = await capture(['run-live', '--data-dir', dataDir]);
      expect(r).toMatchObject({
        code: 1,
        errOut: expect.stringMatching(
          /^horizon export: run run-live is still running: export it once it has finished or been cancelled \(.* is in use by process \d+/,
        ),
      });
      expect(existsSync(path.join(dataLayout.exportsDir(dataDir), 'run-live.zip'))).toBe(false);
      expect(readFileSync(lock, 'utf8')).toBe(String(process.ppid));
    } finally {
      await rm(lock);
    }
  });

  it('exports a run left running by a process that stopped (nothing holds the folder) as failed, and resumable', async () => {
    const r = await capture(['run-live', '--data-dir', dataDir]);
    expect(r.code).toBe(0);
    expect(r.out).toContain('note: run run-live is failed: the ZIP holds 1 of its 4 prompts');
    expect(existsSync(path.join(dataLayout.exportsDir(dataDir), 'run-live.zip'))).toBe(true);
    expect(existsSync(path.join(dataDir, '.runmap.lock'))).toBe(false);
    const db = openDatabase(dataLayout.database(dataDir));
    expect(new RunRepo(db).require('run-live')).toMatchObject({ status: 'failed', error: INTERRUPTED_RUN });
    db.close();
  });

  it('names a run that is not in the database', async () => {
    expect(await capture(['run-nope', '--data-dir', dataDir])).toMatchObject({
      code: 1,
      errOut: `horizon export: run run-nope not found in ${dataLayout.database(dataDir)} (see --list)`,
    });
  });

  it('lists the runs, one line each, and says so when there is none', async () => {
    const r = await capture(['--list', '--data-dir', dataDir]);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/^run-part {2}cancelled 2\/3 {2}\S+ {2}\S+ {2}\S+$/m);
    // Statuses padded to one width (the run another process left running is failed by now).
    expect(r.out).toMatch(/^run-live {2}failed {4}1\/4 {2}/m);
    expect(await capture(['--list', 'run-part', '--data-dir', dataDir])).toMatchObject({ code: 2, errOut: expect.stringMatching(/^horizon export: --list takes no RUN_ID/) });
    const empty = await mkdtemp(path.join(os.tmpdir(), 'horizon-cli-export-empty-'));
    try {
      openDatabase(dataLayout.database(empty)).close();
      expect(await capture(['--list', '--data-dir', empty])).toEqual({ code: 0, out: `no runs in ${dataLayout.database(empty)}`, errOut: '' });
    } finally {
      await rm(empty, { recursive: true, force: true });
    }
  });

  it('exports a cancelled run, saying how many of its prompts the ZIP holds', async () => {
    const r = await capture(['run-part', '--data-dir', dataDir]);
    expect(r.code).toBe(0);
    expect(r.out).toContain('note: run run-part is cancelled: the ZIP holds 2 of its 3 prompts');
    expect(existsSync(path.join(dataLayout.exportsDir(dataDir), 'run-part.zip'))).toBe(true);
  });
});
