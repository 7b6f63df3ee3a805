import { mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { afterEach, describe, expect, it } from 'vitest';

import { deleteRunExportFiles, runExportFiles } from '../../../../../electron/main/export/run-export-files.js';

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

describe('run export files', () => {
  it('lists only <runId>.zip, a regular file', () => {
    const dir = exportsDir(['r1.zip', 'r10.zip', 'r1.zip.bak', 'other.zip']);
    symlinkSync(path.join(dir, 'other.zip'), path.join(dir, 'r2.zip'));
    return Promise.all([
      expect(runExportFiles(dir, 'r1')).resolves.toEqual([{ path: path.join(dir, 'r1.zip'), name: 'r1.zip', bytes: 3 }]),
      expect(runExportFiles(dir, 'r2')).resolves.toEqual([]),
      expect(runExportFiles(path.join(dir, 'missing'), 'r1')).resolves.toEqual([]),
    ]);
  });

  it("deletes the run's ZIP and the temporary files its dead exports left, nothing else", async () => {
    const live = `r1.zip.${process.pid}.1700000000000.tmp`;
    const dead = `r1.zip.${DEAD_PID}.1700000000000.tmp`;
    const dir = exportsDir(['r1.zip', live, dead, `r10.zip.${DEAD_PID}.1.tmp`, 'r10.zip', 'r1.zip.notes.tmp']);
    const r = await deleteRunExportFiles(dir, 'r1');
    expect(r.errors).toEqual([]);
    expect(r.deleted.sort()).toEqual([path.join(dir, 'r1.zip'), path.join(dir, dead)].sort());
    expect(readdirSync(dir).sort()).toEqual([live, `r10.zip.${DEAD_PID}.1.tmp`, 'r10.zip', 'r1.zip.notes.tmp'].sort());
  });
});
