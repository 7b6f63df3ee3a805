import fs from 'node:fs';
import path from 'node:path';

import { PrepError } from './prep-error.js';

type StatFs = (p: string) => Promise<{ bavail: number | bigint; bsize: number | bigint }>;

/** Free bytes available to this user on the filesystem holding `dir` (or its nearest existing parent). */
export async function freeBytes(dir: string, statfs: StatFs = (p) => fs.promises.statfs(p)): Promise<number> {
  let probe = path.resolve(dir);
  for (;;) {
    try {
      const s = await statfs(probe);
      return Number(s.bavail) * Number(s.bsize);
    } catch (error) {
      const parent = path.dirname(probe);
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT' || parent === probe) throw error;
      probe = parent;
    }
  }
}

const gb = (n: number): string => `${(n / 1e9).toFixed(2)} GB`;

/** Fails with DISK_FULL, before any work, when `dir` has less than `needed` bytes free. */
export async function assertFreeSpace(dir: string, needed: number, what: string, statfs?: StatFs): Promise<void> {
  const free = await freeBytes(dir, statfs);
  if (free < needed) {
    throw new PrepError('DISK_FULL', `not enough free disk space in ${dir} for ${what}: need ${gb(needed)}, ${gb(free)} free`);
  }
}
