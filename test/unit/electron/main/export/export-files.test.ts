import { mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { afterEach, describe, expect, it } from 'vitest';

import { deleteExportFiles, exportFiles } from '../../../../../electron/main/export/export-files.js';

let root: string | undefined;
afterEach(() => {
  if (root) rmSync(root, { recursive: true, force: true });
  root = undefined;
});

/** A pid no process has (above Linux's pid_max default and Windows' usual range). */
const DEAD_PID = 4_194_000;

function exportsDir(files: readonly string[]): string {
  root = mkdtempSync(path.join(os.tmpdir(), 'horizon-run-exports-'));
  const dir = path.join(root, 'exports');
  mkdirSync(dir);
  for (const f of files) writeFileSync(path.join(dir, f), 'zip');
  return dir;
}

describe('export files of runs and campaigns', () => {
  it('lists only <runId>.zip, a regular file', () => {
    const dir = exportsDir(['r1.zip', 'r10.zip', 'r1.zip.bak', 'other.zip']);
    symlinkSync(path.join(dir, 'other.zip'), path.join(dir, 'r2.zip'));
    return Promise.all([
      expect(exportFiles(dir, 'r1')).resolves.toEqual([{ path: path.join(dir, 'r1.zip'), name: 'r1.zip', bytes: 3 }]),
      expect(exportFiles(dir, 'r2')).resolves.toEqual([]),
      expect(exportFiles(path.join(dir, 'missing'), 'r1')).resolves.toEqual([]),
    ]);
  });

  it("deletes the run's ZIP and the temporary files its dead exports left, nothing else", async () => {
    const live = `r1.zip.${process.pid}.1700000000000.tmp`;
    const dead = `r1.zip.${DEAD_PID}.1700000000000.tmp`;
    const dir = exportsDir(['r1.zip', live, dead, `r10.zip.${DEAD_PID}.1.tmp`, 'r10.zip', 'r1.zip.notes.tmp']);
    const r = await deleteExportFiles(dir, 'r1');
    expect(r.errors).toEqual([]);
    expect(r.deleted.sort()).toEqual([path.join(dir, 'r1.zip'), path.join(dir, dead)].sort());
    expect(readdirSync(dir).sort()).toEqual([live, `r10.zip.${DEAD_PID}.1.tmp`, 'r10.zip', 'r1.zip.notes.tmp'].sort());
  });

  it("leaves another run's dead temporary files whose name is as long as the run's prefix", async () => {
    const other = `ab.zip.${DEAD_PID}.1.tmp`;
    const dir = exportsDir([other, `r1.zip.${DEAD_PID}.1.tmp`]);
    expect(await deleteExportFiles(dir, 'r1')).toEqual({ deleted: [path.join(dir, `r1.zip.${DEAD_PID}.1.tmp`)], errors: [] });
    expect(readdirSync(dir)).toEqual([other]);
  });

  it('finds nothing, and deletes nothing, where the exports folder is a file', async () => {
    const dir = exportsDir(['r1.zip']);
    const file = path.join(dir, 'r1.zip');
    await expect(exportFiles(file, 'r1')).resolves.toEqual([]);
    await expect(deleteExportFiles(file, 'r1')).resolves.toEqual({ deleted: [], errors: [] });
  });

  it('takes a file another deletion removed first as deleted, not as an error', async () => {
    const temps = Array.from({ length: 20 }, (_, i) => `r1.zip.${DEAD_PID}.${i}.tmp`);
    const dir = exportsDir(['r1.zip', ...temps]);
    const [a, b] = await Promise.all([deleteExportFiles(dir, 'r1'), deleteExportFiles(dir, 'r1')]);
    expect([a.errors, b.errors]).toEqual([[], []]);
    expect([...a.deleted, ...b.deleted].sort()).toEqual(['r1.zip', ...temps].map((f) => path.join(dir, f)).sort());
    expect(readdirSync(dir)).toEqual([]);
  });
});
