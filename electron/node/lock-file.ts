/**
 * Lock files holding the owner's pid: one owner at a time, in this process or another; a lock whose process has
 * died is taken over.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';

const held = new Set<string>();

/** The lock is held: by this process, or by the live process with that pid. */
export class LockBusyError extends Error {
  constructor(
    readonly file: string,
    readonly holder: 'this process' | number,
  ) {
    super(`${file} is held by ${holder === 'this process' ? holder : `process ${holder}`}`);
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Takes `file` and returns its release. Synchronous, so that two callers in this process can never both pass the
 * check; the pid is written to a temporary file and linked into place, so another process never sees it empty.
 */
export function takeLockFile(file: string): () => void {
  if (held.has(file)) throw new LockBusyError(file, 'this process');
  const temp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}`;
  fs.writeFileSync(temp, String(process.pid));
  try {
    for (let attempt = 0; attempt < 2; attempt++) {
      try {
        fs.linkSync(temp, file);
        held.add(file);
        return () => {
          if (!held.delete(file)) return;
          fs.rmSync(file, { force: true });
        };
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
        const pid = Number(fs.readFileSync(file, 'utf8').trim());
        // Our own pid here is a lock this process left without releasing (not held: checked above).
        if (Number.isInteger(pid) && pid > 0 && pid !== process.pid && alive(pid)) throw new LockBusyError(file, pid);
        fs.rmSync(file, { force: true });
      }
    }
    throw new Error(`${file}: cannot take the lock`);
  } finally {
    fs.rmSync(temp, { force: true });
  }
}
