import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';

import { LockBusyError, processStartId, takeLockFile } from '../../../../electron/node/lock-file.js';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'horizon-lock-'));
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));
afterEach(() => {
  vi.restoreAllMocks();
});

const realReadFileSync = fs.readFileSync;
const deadPid = (): string => String(spawnSync(process.execPath, ['-e', '0']).pid);
let n = 0;
const lockIn = (): { dir: string; file: string } => {
  const dir = path.join(root, String(n++));
  fs.mkdirSync(dir);
  return { dir, file: path.join(dir, 'x.lock') };
};

/** Replaces `file` by a lock of the live parent process, as another process that takes the lock would. */
function lockByParent(file: string): bigint {
  fs.rmSync(file, { force: true });
  const t = `${file}.theirs`;
  fs.writeFileSync(t, String(process.ppid));
  fs.linkSync(t, file);
  fs.rmSync(t);
  return fs.statSync(file, { bigint: true }).ino;
}

function holderOf(fn: () => unknown): LockBusyError['holder'] | undefined {
  try {
    fn();
  } catch (error) {
    if (error instanceof LockBusyError) return error.holder;
    throw error;
  }
  return undefined;
}

describe('takeLockFile', () => {
  it('leaves alone a stale lock that another process took over between our read and our takeover', () => {
    const { dir, file } = lockIn();
    fs.writeFileSync(file, deadPid());
    let theirs: bigint | undefined;
    vi.spyOn(fs, 'readFileSync').mockImplementation(((p: fs.PathOrFileDescriptor, o?: unknown) => {
      const out = realReadFileSync(p, o as BufferEncoding);
      if (p === file && theirs === undefined) theirs = lockByParent(file);
      return out;
    }) as typeof fs.readFileSync);
    expect(holderOf(() => takeLockFile(file))).toBe(process.ppid);
    vi.restoreAllMocks();
    expect(fs.readFileSync(file, 'utf8')).toBe(String(process.ppid));
    expect(fs.statSync(file, { bigint: true }).ino).toBe(theirs);
    expect(fs.readdirSync(dir)).toEqual(['x.lock']);
  });

  it('releases only the lock file it created', () => {
    const { dir, file } = lockIn();
    const release = takeLockFile(file);
    expect(fs.readFileSync(file, 'utf8')).toBe(String(process.pid));
    const theirs = lockByParent(file);
    release();
    expect(fs.statSync(file, { bigint: true }).ino).toBe(theirs);
    expect(fs.readdirSync(dir)).toEqual(['x.lock']);
  });

  // EISDIR: Windows' ERROR_INVALID_FUNCTION, CreateHardLink's answer on FAT and exFAT, as libuv names it.
  it.each(['EPERM', 'ENOTSUP', 'EISDIR'])('creates the lock with O_EXCL where link() fails with %s (FAT, exFAT)', (code) => {
    const { dir, file } = lockIn();
    vi.spyOn(fs, 'linkSync').mockImplementation(() => {
      throw Object.assign(new Error(`${code}: operation not permitted, link`), { code });
    });
    const release = takeLockFile(file);
    expect(fs.readFileSync(file, 'utf8')).toBe(String(process.pid));
    expect(holderOf(() => takeLockFile(file))).toBe('this process');
    release();
    expect(fs.readdirSync(dir)).toEqual([]);
    // A stale lock is taken over there too, and a live one refused.
    fs.writeFileSync(file, deadPid());
    takeLockFile(file)();
    fs.writeFileSync(file, String(process.ppid));
    expect(holderOf(() => takeLockFile(file))).toBe(process.ppid);
  });

  /** Makes stat give a file moved aside another id, as FAT and exFAT under Windows do on a rename to a longer name. */
  function idsChangeOnRename(): void {
    const realStatSync = fs.statSync;
    vi.spyOn(fs, 'statSync').mockImplementation(((p: fs.PathLike, o?: fs.StatSyncOptions) => {
      const st = realStatSync(p, o) as fs.Stats | fs.BigIntStats | undefined;
      if (!st || !String(p).includes('.stale-')) return st;
      const moved = Object.create(Object.getPrototypeOf(st) as object) as typeof st;
      Object.assign(moved, st, { ino: typeof st.ino === 'bigint' ? st.ino + 1000n : st.ino + 1000 });
      return moved;
    }) as typeof fs.statSync);
  }

  it('takes over a dead process\'s lock where a rename gives the file another id (FAT, exFAT under Windows)', () => {
    const { dir, file } = lockIn();
    fs.writeFileSync(file, deadPid());
    idsChangeOnRename();
    const release = takeLockFile(file);
    expect(fs.readFileSync(file, 'utf8')).toBe(String(process.pid));
    release();
    expect(fs.readdirSync(dir)).toEqual([]);
  });

  it('takes over an old empty lock file there too, and puts back a fresh one (an O_EXCL writer about to fill it)', () => {
    const { dir, file } = lockIn();
    fs.writeFileSync(file, '');
    const old = (Date.now() - 60_000) / 1000;
    fs.utimesSync(file, old, old);
    idsChangeOnRename();
    const release = takeLockFile(file);
    expect(fs.readFileSync(file, 'utf8')).toBe(String(process.pid));
    release();
    fs.writeFileSync(file, '');
    expect(() => takeLockFile(file)).toThrow(/cannot take the lock/);
    expect(fs.readdirSync(dir)).toEqual(['x.lock']);
    expect(fs.readFileSync(file, 'utf8')).toBe('');
  });

  it('waits for the pid of a lock file that is still empty (an O_EXCL writer between open and write)', () => {
    const { file } = lockIn();
    fs.writeFileSync(file, '');
    let filled = false;
    vi.spyOn(fs, 'readFileSync').mockImplementation(((p: fs.PathOrFileDescriptor, o?: unknown) => {
      const out = realReadFileSync(p, o as BufferEncoding);
      if (p === file && !filled) {
        filled = true;
        fs.writeFileSync(file, String(process.ppid));
      }
      return out;
    }) as typeof fs.readFileSync);
    expect(holderOf(() => takeLockFile(file))).toBe(process.ppid);
  });

  describe.skipIf(processStartId(process.pid) === undefined)('where the system says when a process started (Linux)', () => {
    it('leaves an owner file naming its start beside the lock, and removes both on release', () => {
      const { dir, file } = lockIn();
      const release = takeLockFile(file);
      expect(fs.readFileSync(`${file}.owner-${process.pid}`, 'utf8')).toBe(processStartId(process.pid));
      expect(fs.readdirSync(dir).sort()).toEqual(['x.lock', `x.lock.owner-${process.pid}`]);
      release();
      expect(fs.readdirSync(dir)).toEqual([]);
    });

    it('takes over a lock whose pid now belongs to another live process (reused after a crash and a reboot)', () => {
      const { dir, file } = lockIn();
      fs.writeFileSync(file, String(process.ppid));
      fs.writeFileSync(`${file}.owner-${process.ppid}`, '00000000-0000-0000-0000-000000000000 42');
      const release = takeLockFile(file);
      expect(fs.readFileSync(file, 'utf8')).toBe(String(process.pid));
      expect(fs.readdirSync(dir).sort()).toEqual(['x.lock', `x.lock.owner-${process.pid}`]);
      release();
      expect(fs.readdirSync(dir)).toEqual([]);
    });

    it('puts back a lock that the live process with the reused pid took between our read and our takeover', () => {
      const { dir, file } = lockIn();
      fs.writeFileSync(file, String(process.ppid));
      const owner = `${file}.owner-${process.ppid}`;
      fs.writeFileSync(owner, '00000000-0000-0000-0000-000000000000 42');
      // The parent, whose pid the stale lock names, takes it over as takeLockFile does: its pid in a temporary file and
      // its owner file first, then the stale lock removed and the temporary file linked in its place.
      let theirs: bigint | undefined;
      const realRenameSync = fs.renameSync;
      vi.spyOn(fs, 'renameSync').mockImplementation((from: fs.PathLike, to: fs.PathLike) => {
        if (from === file && theirs === undefined) {
          const t = `${file}.theirs`;
          fs.writeFileSync(t, String(process.ppid));
          fs.writeFileSync(owner, processStartId(process.ppid)!);
          fs.rmSync(file);
          fs.linkSync(t, file);
          fs.rmSync(t);
          theirs = fs.statSync(file, { bigint: true }).ino;
        }
        realRenameSync(from, to);
      });
      expect(holderOf(() => takeLockFile(file))).toBe(process.ppid);
      vi.restoreAllMocks();
      expect(fs.statSync(file, { bigint: true }).ino).toBe(theirs);
      expect(fs.readdirSync(dir).sort()).toEqual(['x.lock', `x.lock.owner-${process.ppid}`]);
    });

    it('refuses a live owner whose owner file names its start, and leaves both files alone', () => {
      const { dir, file } = lockIn();
      fs.writeFileSync(file, String(process.ppid));
      fs.writeFileSync(`${file}.owner-${process.ppid}`, processStartId(process.ppid)!);
      expect(holderOf(() => takeLockFile(file))).toBe(process.ppid);
      expect(fs.readdirSync(dir).sort()).toEqual(['x.lock', `x.lock.owner-${process.ppid}`]);
      expect(fs.readFileSync(file, 'utf8')).toBe(String(process.ppid));
    });
  });
});

describe('takeLockFile: owners', () => {
  it('names the holder in its message', () => {
    expect(new LockBusyError('/d/x.lock', 'this process').message).toBe('/d/x.lock is held by this process');
    expect(new LockBusyError('/d/x.lock', 42).message).toBe('/d/x.lock is held by process 42');
  });

  it('takes over a lock naming this process that this process does not hold (left without a release)', () => {
    const { file } = lockIn();
    fs.writeFileSync(file, String(process.pid));
    const release = takeLockFile(file);
    expect(fs.readFileSync(file, 'utf8')).toBe(String(process.pid));
    release();
    expect(fs.existsSync(file)).toBe(false);
  });

  it('counts a live owner whose owner file is empty as the holder (nothing says its pid was reused)', () => {
    const { file } = lockIn();
    lockByParent(file);
    fs.writeFileSync(`${file}.owner-${process.ppid}`, '');
    expect(holderOf(() => takeLockFile(file))).toBe(process.ppid);
    expect(fs.readFileSync(file, 'utf8')).toBe(String(process.ppid));
  });

  it('a second release of a lock does nothing to the lock taken after it', () => {
    const { file } = lockIn();
    const first = takeLockFile(file);
    first();
    const second = takeLockFile(file);
    first();
    expect(fs.readFileSync(file, 'utf8')).toBe(String(process.pid));
    if (processStartId(process.pid) !== undefined) expect(fs.existsSync(`${file}.owner-${process.pid}`)).toBe(true);
    expect(holderOf(() => takeLockFile(file))).toBe('this process');
    second();
    expect(fs.existsSync(file)).toBe(false);
  });
});
