import path from 'node:path';

import { LockBusyError, takeLockFile } from '../../node/lock-file.js';
import { PrepError } from './prep-error.js';

/**
 * Takes `<dir>/.prepare.lock` (pid inside) so two preparations of one model, in this process or another, never write
 * the same files; a lock left by a dead process is taken over. Returns the release function.
 */
export async function acquirePrepLock(dir: string, what: string): Promise<() => Promise<void>> {
  const file = path.join(dir, '.prepare.lock');
  try {
    const release = takeLockFile(file);
    return async () => release();
  } catch (error) {
    if (!(error instanceof LockBusyError)) throw error;
    throw new PrepError(
      'BAD_INPUT',
      error.holder === 'this process'
        ? `${what} is already being prepared in this process`
        : `${what} is already being prepared by process ${error.holder} (lock ${file})`,
    );
  }
}
