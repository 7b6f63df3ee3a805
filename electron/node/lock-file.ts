/**
 * Lock files holding the owner's pid: one owner at a time, in this process or another; a lock whose process has
 * died is taken over. Where the system says when a process started (Linux), the owner also leaves
 * `<lock>.owner-<pid>` naming its boot and start time, so that a lock whose pid now belongs to another process (after
 * a crash and a reboot, say) is known to be stale too.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';

/** The locks this process holds: file → the token of the take holding it (so that a stale release is a no-op). */
const held = new Map<string, string>();

/**
 * link(2) errors of file systems without hard links (FAT, exFAT), where the lock is created with O_EXCL instead.
 * EISDIR is Windows' ERROR_INVALID_FUNCTION as libuv names it: CreateHardLink's answer on FAT and exFAT.
 */
const NO_HARD_LINKS = new Set(['EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'ENOSYS', 'EISDIR']);
/** How long an empty lock file is given to receive its pid (an O_EXCL writer between open and write). */
const EMPTY_GRACE_MS = 50;
/** An empty (or unreadable) lock file older than this is stale whatever its file id: no writer takes that long. */
const EMPTY_STALE_MS = 5000;
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

/** This boot's id and the process's start time in clock ticks since boot; undefined where the system does not say. */
export function processStartId(pid: number): string | undefined {
  try {
    const boot = fs.readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Field 2, the command name, may hold spaces and parentheses; starttime is field 22, the 20th after its ')'.
    const start = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
    return boot && start && /^\d+$/.test(start) ? `${boot} ${start}` : undefined;
  } catch {
    return undefined;
  }
}

const ownerFile = (file: string, pid: number): string => `${file}.owner-${pid}`;

/**
 * Whether live `pid` is not the process that took the lock: the owner file it left names another start. Without an
 * owner file (a system that does not say, or an older version's lock) the pid alone decides: the lock is held.
 */
function pidReused(file: string, pid: number): boolean {
  let recorded: string;
  try {
    recorded = fs.readFileSync(ownerFile(file, pid), 'utf8').trim();
  } catch {
    return false;
  }
  const current = processStartId(pid);
  return recorded !== '' && current !== undefined && recorded !== current;
}

/**
 * Whether a lock file naming `pid` (0: none) has no owner: no pid, ours (a lock this process left without releasing;
 * the caller has checked it does not hold it), a pid no process has, or one that another process has now.
 */
function ownerGone(file: string, pid: number): boolean {
  return pid <= 0 || pid === process.pid || !processAlive(pid) || pidReused(file, pid);
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

/** The lock file's inode, undefined when it is gone. */
function inodeOf(file: string): bigint | undefined {
  try {
    return fs.statSync(file, { bigint: true }).ino;
  } catch (error) {
    if (errno(error) === 'ENOENT') return undefined;
    throw error;
  }
}

/** Whether the file moved `aside` is still a stale lock naming `pid`: the one read as inode `ino`, or one as stale. */
function stillStale(file: string, aside: string, ino: bigint, pid: number): boolean {
  if (readPid(aside, false) !== pid) return false;
  // A pid is judged again rather than by the inode alone: FAT and exFAT under Windows give a file another id when it
  // is renamed to a longer name, and a lock another process took over meanwhile (one with that very pid, reused, say)
  // names a live owner.
  if (pid > 0) return ownerGone(file, pid);
  if (inodeOf(aside) === ino) return true;
  try {
    return Date.now() - fs.statSync(aside).mtimeMs > EMPTY_STALE_MS;
  } catch (error) {
    if (errno(error) === 'ENOENT') return false;
    throw error;
  }
}

/**
 * Removes the stale lock file `ino` naming `pid`. It is first renamed aside, which only one process can do: when what
 * was moved is no longer stale (a process took the stale lock over after we read it, possibly one with that very
 * pid, reused) its lock goes back.
 */
function removeStale(file: string, ino: bigint, pid: number, token: string): void {
  const aside = `${file}.stale-${process.pid}-${token}`;
  try {
    fs.renameSync(file, aside);
  } catch (error) {
    if (errno(error) === 'ENOENT') return;
    throw error;
  }
  if (!stillStale(file, aside, ino, pid)) {
    fs.renameSync(aside, file);
    return;
  }
  fs.rmSync(aside, { force: true });
  // Ours was just written by this take. Removing a live process's fresh one by mistake is safe: without it, its lock
  // counts as held while its pid lives.
  if (pid !== process.pid) fs.rmSync(ownerFile(file, pid), { force: true });
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
  const owner = ownerFile(file, process.pid);
  const startId = processStartId(process.pid);
  fs.writeFileSync(temp, String(process.pid));
  let taken = false;
  try {
    // Written before the lock exists, so that whoever reads our pid in the lock finds it.
    if (startId !== undefined) fs.writeFileSync(owner, startId);
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      if (create(temp, file)) {
        const ino = fs.statSync(file, { bigint: true }).ino;
        held.set(file, token);
        taken = true;
        return () => {
          // A second call, or one after the lock was released and taken again, must not release the later take.
          if (held.get(file) !== token) return;
          held.delete(file);
          try {
            if (inodeOf(file) === ino && readPid(file) === process.pid) fs.rmSync(file, { force: true });
          } finally {
            fs.rmSync(owner, { force: true });
          }
        };
      }
      const ino = inodeOf(file);
      const pid = ino === undefined ? undefined : readPid(file);
      if (ino === undefined || pid === undefined) continue;
      // Our own pid here is a lock this process left without releasing (not held: checked above).
      if (!ownerGone(file, pid)) throw new LockBusyError(file, pid);
      removeStale(file, ino, pid, token);
    }
    throw new Error(`${file}: cannot take the lock; other processes keep taking it over`);
  } finally {
    fs.rmSync(temp, { force: true });
    if (!taken) fs.rmSync(owner, { force: true });
  }
}
