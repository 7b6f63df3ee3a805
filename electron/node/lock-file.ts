/**
 * Lock files holding the owner's pid: one owner at a time, in this process or another; a lock whose process has
 * died is taken over.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';

const held = new Set<string>();

/** link(2) errors of file systems without hard links (FAT, exFAT), where the lock is created with O_EXCL instead. */
const NO_HARD_LINKS = new Set(['EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'ENOSYS']);
/** How long an empty lock file is given to receive its pid (an O_EXCL writer between open and write). */
const EMPTY_GRACE_MS = 50;
const MAX_ATTEMPTS = 5;

/** The lock is held: by this process, or by the live process with that pid. */
export class LockBusyError extends Error {
  constructor(
    readonly file: string,
    readonly holder: 'this process' | number,
  ) {
    super(`${file} is held by ${holder === 'this process' ? holder : `process ${holder}`}`);
  }
}

/** Whether a process with this pid exists, this user's or another's. */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

const errno = (error: unknown): string | undefined => (error as NodeJS.ErrnoException).code;

function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/** The pid a lock file names, 0 when it names none, undefined when the file is gone. */
function readPid(file: string, grace = true): number | undefined {
  const read = (): string | undefined => {
    try {
      return fs.readFileSync(file, 'utf8').trim();
    } catch (error) {
      if (errno(error) === 'ENOENT') return undefined;
      throw error;
    }
  };
  let text = read();
  if (text === '' && grace) {
    sleepSync(EMPTY_GRACE_MS);
    text = read();
  }
  if (text === undefined) return undefined;
  const pid = Number(text);
  return Number.isInteger(pid) && pid > 0 ? pid : 0;
}

/** Creates `file` holding our pid unless it exists; false when it does. */
function create(temp: string, file: string): boolean {
  try {
    fs.linkSync(temp, file);
    return true;
  } catch (error) {
    if (errno(error) === 'EEXIST') return false;
    if (!NO_HARD_LINKS.has(errno(error) ?? '')) throw error;
  }
  let fd: number;
  try {
    fd = fs.openSync(file, 'wx');
  } catch (error) {
    if (errno(error) === 'EEXIST') return false;
    throw error;
  }
  try {
    fs.writeSync(fd, String(process.pid));
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  return true;
}

/**
 * Removes the lock file naming the dead `pid`. It is first renamed aside, which only one process can do: when what
 * was moved names someone else, another process took the stale lock over after we read it, and its lock goes back.
 */
function removeStale(file: string, pid: number, token: string): void {
  const aside = `${file}.stale-${process.pid}-${token}`;
  try {
    fs.renameSync(file, aside);
  } catch (error) {
    if (errno(error) === 'ENOENT') return;
    throw error;
  }
  if (readPid(aside, false) === pid) fs.rmSync(aside, { force: true });
  else fs.renameSync(aside, file);
}

/**
 * Takes `file` and returns its release. Synchronous, so that two callers in this process can never both pass the
 * check; the pid is written to a temporary file and linked into place, so another process never sees it empty.
 * The release removes the file only while it is still the one this call created.
 */
export function takeLockFile(file: string): () => void {
  if (held.has(file)) throw new LockBusyError(file, 'this process');
  const token = randomBytes(4).toString('hex');
  const temp = `${file}.${process.pid}.${token}`;
  fs.writeFileSync(temp, String(process.pid));
  try {
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      if (create(temp, file)) {
        const ino = fs.statSync(file, { bigint: true }).ino;
        held.add(file);
        return () => {
          if (!held.delete(file)) return;
          try {
            if (fs.statSync(file, { bigint: true }).ino !== ino || readPid(file) !== process.pid) return;
          } catch (error) {
            if (errno(error) === 'ENOENT') return;
            throw error;
          }
          fs.rmSync(file, { force: true });
        };
      }
      const pid = readPid(file);
      if (pid === undefined) continue;
      // Our own pid here is a lock this process left without releasing (not held: checked above).
      if (pid > 0 && pid !== process.pid && processAlive(pid)) throw new LockBusyError(file, pid);
      removeStale(file, pid, token);
    }
    throw new Error(`${file}: cannot take the lock; other processes keep taking it over`);
  } finally {
    fs.rmSync(temp, { force: true });
  }
}
