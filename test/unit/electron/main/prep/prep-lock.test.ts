import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

import { afterAll, describe, expect, it } from 'vitest';

import { acquirePrepLock } from '../../../../../electron/main/prep/prep-lock.js';
import { removeTempDirs, tempDir } from './test-repo.js';

afterAll(() => removeTempDirs());

const lockFile = (dir: string): string => path.join(dir, '.prepare.lock');

describe('acquirePrepLock', () => {
  it('lets exactly one of two concurrent preparations in this process take the lock', async () => {
    const dir = tempDir('lock');
    const results = await Promise.allSettled([acquirePrepLock(dir, 'm@1'), acquirePrepLock(dir, 'm@1')]);
    const taken = results.filter((r) => r.status === 'fulfilled');
    const refused = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    expect(taken).toHaveLength(1);
    expect(refused.map((r) => (r.reason as Error).message)).toEqual(['m@1 is already being prepared in this process']);
    expect(fs.readFileSync(lockFile(dir), 'utf8')).toBe(String(process.pid));
    await (taken[0] as PromiseFulfilledResult<() => Promise<void>>).value();
    expect(fs.existsSync(lockFile(dir))).toBe(false);
    // Released: it can be taken again, and no temporary file is left beside it.
    const release = await acquirePrepLock(dir, 'm@1');
    await release();
    expect(fs.readdirSync(dir)).toEqual([]);
  });

  it('refuses a lock held by another live process, naming it', async () => {
    const dir = tempDir('lock');
    fs.writeFileSync(lockFile(dir), String(process.ppid));
    await expect(acquirePrepLock(dir, 'm@1')).rejects.toThrow(`m@1 is already being prepared by process ${process.ppid}`);
    expect(fs.readFileSync(lockFile(dir), 'utf8')).toBe(String(process.ppid));
  });

  it.each([
    ['a process that has exited', () => String(spawnSync(process.execPath, ['-e', '0']).pid)],
    ['this process, which no longer holds it', () => String(process.pid)],
    ['nobody (an empty file)', () => ''],
  ])('takes over a lock left by %s', async (_who, content) => {
    const dir = tempDir('lock');
    fs.writeFileSync(lockFile(dir), content());
    const release = await acquirePrepLock(dir, 'm@1');
    expect(fs.readFileSync(lockFile(dir), 'utf8')).toBe(String(process.pid));
    await release();
  });
});
