import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

import { PrepError } from './prep-error.js';

const held = new Set<string>();

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Takes `<dir>/.prepare.lock` (pid inside) so two preparations of one model, in this process or another, never write
 * the same files; a lock left by a dead process is taken over. Returns the release function.
 */
export async function acquirePrepLock(dir: string, what: string): Promise<() => Promise<void>> {
  const file = path.join(dir, '.prepare.lock');
  if (held.has(file)) throw new PrepError('BAD_INPUT', `${what} is already being prepared in this process`);
  // Claimed before the first await, so a second call in this process cannot slip in while this one takes the file.
  held.add(file);
  const release = async (): Promise<void> => {
    held.delete(file);
    await fs.promises.rm(file, { force: true });
  };
  // The pid is written to a temporary file first and linked into place, so the lock file is never seen empty.
  const temp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}`;
  try {
    await fs.promises.writeFile(temp, String(process.pid));
    for (let attempt = 0; attempt < 2; attempt++) {
      try {
        await fs.promises.link(temp, file);
        return release;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
        const pid = Number((await fs.promises.readFile(file, 'utf8').catch(() => '')).trim());
        // Our own pid here is a lock this process left without releasing (not held: checked above).
        if (Number.isInteger(pid) && pid > 0 && pid !== process.pid && alive(pid)) {
          throw new PrepError('BAD_INPUT', `${what} is already being prepared by process ${pid} (lock ${file})`);
        }
        await fs.promises.rm(file, { force: true });
      }
    }
    throw new PrepError('INTERNAL', `${file}: cannot take the preparation lock`);
  } catch (error) {
    held.delete(file);
    throw error;
  } finally {
    await fs.promises.rm(temp, { force: true });
  }
}
