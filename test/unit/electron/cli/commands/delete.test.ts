import { existsSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { run } from '../../../../../electron/cli/commands/delete.js';
import { main } from '../../../../../electron/cli/index.js';
import { dataLayout } from '../../../../../electron/main/data-dir.js';
import { openDatabase } from '../../../../../electron/main/db/open-database.js';
import { PerfRepo } from '../../../../../electron/main/db/perf-repo.js';
import { RunRepo } from '../../../../../electron/main/db/run-repo.js';
import { loadTextTools } from '../../../../../evals/ifeval/node/load-text-tools.js';
import { storeRun } from '../../main/export/zip-fixtures.js';
import { captureConsole } from '../capture-console.js';

const SHARED = path.resolve(import.meta.dirname, '..', '..', '..', '..', '..', '..', 'shared');

const capture = (args: string[]) => captureConsole(() => run(args));

describe('horizon delete', () => {
  let dataDir: string;
  let exportsDir: string;
  const stored = (runId: string): boolean => {
    const db = openDatabase(dataLayout.database(dataDir));
    try {
      return new RunRepo(db).get(runId) !== undefined;
    } finally {
      db.close();
    }
  };

  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'horizon-cli-delete-'));
    exportsDir = dataLayout.exportsDir(dataDir);
    const tools = await loadTextTools({ punktDir: path.join(SHARED, 'nltk', 'punkt_english') });
    const official = readFileSync(path.join(SHARED, 'ifeval', 'input_data.jsonl'), 'utf8');
    const db = openDatabase(dataLayout.database(dataDir));
    storeRun(db, 'run-keep-zip', official, 3, ['One answer.', 'Two answers.'], tools, 'completed');
    storeRun(db, 'run-with-zip', official, 3, ['One answer.'], tools, 'cancelled');
    storeRun(db, 'run-link', official, 2, ['One answer.'], tools, 'failed');
    storeRun(db, 'run-live', official, 4, ['One answer.'], tools, 'running');
    db.close();
    await mkdir(exportsDir, { recursive: true });
    for (const name of ['run-keep-zip.zip', 'run-with-zip.zip', 'run-with-zip.zip.bak', 'run-with-zip-2.zip']) {
      await writeFile(path.join(exportsDir, name), name);
    }
    await writeFile(path.join(dataDir, 'elsewhere.zip'), 'outside exports');
    await symlink(path.join(dataDir, 'elsewhere.zip'), path.join(exportsDir, 'run-link.zip'));
  });
  afterAll(() => rm(dataDir, { recursive: true, force: true }));

  it('is listed by horizon --help', async () => {
    const r = await captureConsole(() => main(['--help']));
    expect(r.out).toMatch(/^ {2}delete {5}delete a stored run with its responses, or a campaign \(and, with --delete-export, its ZIP\)$/m);
  });

  it('needs exactly one RUN_ID and a database that exists', async () => {
    expect(await capture(['--data-dir', dataDir])).toMatchObject({ code: 2, errOut: expect.stringMatching(/^horizon delete: give one RUN_ID/) });
    expect(await capture(['a', 'b', '--data-dir', dataDir])).toMatchObject({ code: 2 });
    expect(await capture(['x', '--bogus'])).toMatchObject({ code: 2, errOut: expect.stringMatching(/Unknown option '--bogus'/) });
    const mistyped = path.join(dataDir, 'mistyped');
    expect(await capture(['run-keep-zip', '--data-dir', mistyped])).toMatchObject({ code: 1, errOut: expect.stringContaining('no database at') });
    expect(existsSync(mistyped)).toBe(false);
    expect(await capture(['run-nope', '--data-dir', dataDir])).toMatchObject({
      code: 1,
      errOut: `horizon delete: run run-nope not found in ${dataLayout.database(dataDir)} (see horizon export --list)`,
    });
  });

  it('deletes a run and keeps its ZIP unless asked, saying where it is', async () => {
    const r = await capture(['run-keep-zip', '--data-dir', dataDir]);
    expect(r).toMatchObject({ code: 0, errOut: '' });
    expect(r.out).toBe(
      `deleted run run-keep-zip (2 responses) from ${dataLayout.database(dataDir)}\n` +
        `kept its result ZIP ${path.join(exportsDir, 'run-keep-zip.zip')} (--delete-export deletes it)`,
    );
    expect(stored('run-keep-zip')).toBe(false);
    expect(existsSync(path.join(exportsDir, 'run-keep-zip.zip'))).toBe(true);
  });

  it("with --delete-export deletes the run's own ZIP and no other file", async () => {
    const r = await capture(['run-with-zip', '--delete-export', '--data-dir', dataDir]);
    expect(r).toMatchObject({ code: 0, errOut: '' });
    expect(r.out).toBe(`deleted run run-with-zip (1 response) from ${dataLayout.database(dataDir)}\ndeleted ${path.join(exportsDir, 'run-with-zip.zip')}`);
    expect(existsSync(path.join(exportsDir, 'run-with-zip.zip'))).toBe(false);
    for (const kept of ['run-with-zip.zip.bak', 'run-with-zip-2.zip']) expect(existsSync(path.join(exportsDir, kept))).toBe(true);
  });

  it('never follows a link named as the ZIP out of exports/', async () => {
    const r = await capture(['run-link', '--delete-export', '--data-dir', dataDir]);
    expect(r.code).toBe(0);
    expect(r.out).toContain(`no ZIP of run run-link in ${exportsDir}`);
    expect(readFileSync(path.join(dataDir, 'elsewhere.zip'), 'utf8')).toBe('outside exports');
    expect(stored('run-link')).toBe(false);
  });

  it('with --delete-export exits 1 naming a file it could not delete, after deleting the run', async () => {
    const other = await mkdtemp(path.join(os.tmpdir(), 'horizon-cli-delete-undeletable-'));
    try {
      const tools = await loadTextTools({ punktDir: path.join(SHARED, 'nltk', 'punkt_english') });
      const official = readFileSync(path.join(SHARED, 'ifeval', 'input_data.jsonl'), 'utf8');
      const db = openDatabase(dataLayout.database(other));
      storeRun(db, 'run-x', official, 2, ['One answer.'], tools, 'completed');
      db.close();
      // What looks like the temporary file of an interrupted export (its writer, pid 999999999, long gone), but is a
      // folder: unlink refuses it.
      const temp = path.join(dataLayout.exportsDir(other), 'run-x.zip.999999999.1.tmp');
      await mkdir(temp, { recursive: true });
      const r = await capture(['run-x', '--delete-export', '--data-dir', other]);
      expect(r).toEqual({
        code: 1,
        out: `deleted run run-x (1 response) from ${dataLayout.database(other)}`,
        errOut: expect.stringMatching(new RegExp(`^horizon delete: ${temp.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: not deleted \\((EISDIR|EPERM)\\)$`)),
      });
      expect(existsSync(temp)).toBe(true);
    } finally {
      await rm(other, { recursive: true, force: true });
    }
  });

  it('refuses a run still running in a live process, and deletes one a stopped process left running', async () => {
    const lock = path.join(dataDir, '.runmap.lock');
    await writeFile(lock, String(process.ppid));
    try {
      const r = await capture(['run-live', '--data-dir', dataDir]);
      expect(r).toMatchObject({
        code: 1,
        errOut: expect.stringMatching(/^horizon delete: run run-live is still running: cancel it before deleting it \(.* is in use by process \d+/),
      });
      expect(stored('run-live')).toBe(true);
      expect(readFileSync(lock, 'utf8')).toBe(String(process.ppid));
    } finally {
      await rm(lock);
    }
    const r = await capture(['run-live', '--data-dir', dataDir]);
    expect(r).toMatchObject({ code: 0, out: expect.stringMatching(/^deleted run run-live \(1 response\)/) });
    expect(stored('run-live')).toBe(false);
    expect(existsSync(lock)).toBe(false);
  });

  it('deletes a campaign with --campaign, refusing one a live process measures and one that is not there', async () => {
    const db = openDatabase(dataLayout.database(dataDir));
    const perf = new PerfRepo(db);
    for (const id of ['perf-done', 'perf-live', 'perf-keep']) {
      perf.create({
        id, createdAt: '2026-12-06T10:00:00.000Z',
        model: { modelId: 'm', repo: 'o/m', revision: 'a'.repeat(40), weights: 'int4', manifestSha256: 'b'.repeat(64) },
        backend: 'cpu', deviceLabel: 'CPU', peakMemoryScope: null,
        settings: { prompts: 1, blocks: 1, maxNewTokens: 128, warmupTokens: 64, keys: [1000] },
        configs: [{ label: 'full residency', expertBudgetBytes: null, residency: null }],
      });
      perf.addRequest(id, {
        config: 0, block: 0, key: 1000, promptTokens: 3, tokens: 128, ttftMs: 4, decodeTokensPerSecond: 5, responseMs: 6,
        peakMemoryBytes: 0, h2dBytes: 0, expertHits: 0, expertMisses: 0, expertEvictions: 0,
      });
    }
    perf.finish('perf-done', 'completed');
    perf.finish('perf-keep', 'cancelled');
    db.close();
    for (const name of ['perf-done.zip', 'perf-keep.zip', 'perf-done.zip.bak']) await writeFile(path.join(exportsDir, name), name);
    const dbFile = dataLayout.database(dataDir);
    const zip = (id: string) => path.join(exportsDir, `${id}.zip`);
    expect(await capture(['--campaign', 'perf-done', '--delete-export', '--data-dir', dataDir])).toEqual({
      code: 0,
      out: `deleted campaign perf-done (1 request) from ${dbFile}\ndeleted ${zip('perf-done')}`,
      errOut: '',
    });
    expect([existsSync(zip('perf-done')), existsSync(`${zip('perf-done')}.bak`)]).toEqual([false, true]);
    expect(await capture(['--campaign', 'perf-keep', '--data-dir', dataDir])).toEqual({
      code: 0,
      out: `deleted campaign perf-keep (1 request) from ${dbFile}\nkept its campaign ZIP ${zip('perf-keep')} (--delete-export deletes it)`,
      errOut: '',
    });
    expect(existsSync(zip('perf-keep'))).toBe(true);
    expect(await capture(['--campaign', 'perf-done', '--data-dir', dataDir])).toEqual({
      code: 1, out: '', errOut: `horizon delete: campaign perf-done not found in ${dbFile} (see horizon perf --list)`,
    });
    // While a live process holds the folder, its running campaign stays.
    const lock = path.join(dataDir, '.runmap.lock');
    await writeFile(lock, String(process.ppid));
    try {
      expect(await capture(['--campaign', 'perf-live', '--data-dir', dataDir])).toMatchObject({
        code: 1,
        errOut: expect.stringMatching(/^horizon delete: campaign perf-live is running: cancel it before deleting it \(.* is in use by process \d+/),
      });
    } finally {
      await rm(lock);
    }
    // Left running by no live process: marked failed as the app would, then deleted.
    expect(await capture(['--campaign', 'perf-live', '--delete-export', '--data-dir', dataDir])).toEqual({
      code: 0,
      out: `deleted campaign perf-live (1 request) from ${dbFile}\nno ZIP of campaign perf-live in ${exportsDir}`,
      errOut: '',
    });
    expect(existsSync(lock)).toBe(false);
  });
});
