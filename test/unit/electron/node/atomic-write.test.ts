import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { afterAll, describe, expect, it } from 'vitest';

import { renameDurably, syncFile, writeFileAtomic } from '../../../../electron/node/atomic-write.js';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'horizon-atomic-'));
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

describe('atomic writes', () => {
  it('creates the folder, replaces the old content and leaves no temporary file', async () => {
    const file = path.join(root, 'a', 'b', 'prepared.json');
    await writeFileAtomic(file, 'first');
    await writeFileAtomic(file, new Uint8Array([115, 101, 99, 111, 110, 100]));
    expect(fs.readFileSync(file, 'utf8')).toBe('second');
    expect(fs.readdirSync(path.dirname(file))).toEqual(['prepared.json']);
  });

  it('renames a flushed file into place', async () => {
    const tmp = path.join(root, 'x.zip.tmp');
    fs.writeFileSync(tmp, 'zip bytes');
    await syncFile(tmp);
    await renameDurably(tmp, path.join(root, 'x.zip'));
    expect(fs.readFileSync(path.join(root, 'x.zip'), 'utf8')).toBe('zip bytes');
    expect(fs.existsSync(tmp)).toBe(false);
  });

  it('removes its temporary file when the write fails', async () => {
    const file = path.join(root, 'taken');
    fs.mkdirSync(path.join(file, 'a folder in the way'), { recursive: true });
    await expect(writeFileAtomic(file, 'data')).rejects.toThrow(/E(ISDIR|NOTEMPTY|EXIST|PERM)/);
    expect(fs.readdirSync(root).filter((n) => n.startsWith('taken'))).toEqual(['taken']);
  });

  it('reports a missing temporary file as an error', async () => {
    await expect(renameDurably(path.join(root, 'missing.tmp'), path.join(root, 'y'))).rejects.toThrow(/ENOENT/);
  });
});
