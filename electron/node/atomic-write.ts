/**
 * Writes that never leave a half-written file under its final name, even across a power loss: the bytes go to a
 * temporary file beside it, are flushed to the disk, and only then renamed into place.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

/** Flushes a written file's bytes to the disk. */
export async function syncFile(file: string): Promise<void> {
  const fh = await fs.promises.open(file, 'r+');
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}

/** Flushes a folder's entries (a rename into it), where the platform can; Windows cannot open a folder to sync it. */
async function syncDir(dir: string): Promise<void> {
  let fh: fs.promises.FileHandle | undefined;
  try {
    fh = await fs.promises.open(dir, 'r');
    await fh.sync();
  } catch {
    // Not supported here; the rename is still atomic, only its durability is the file system's.
  } finally {
    await fh?.close();
  }
}

/** Renames a finished, flushed temporary file into place and flushes the folder. */
export async function renameDurably(tmp: string, file: string): Promise<void> {
  await fs.promises.rename(tmp, file);
  await syncDir(path.dirname(file));
}

/**
 * Writes `data` to `file` through a flushed temporary file `<file>.<random>.tmp-<pid>` and a rename (creating the
 * folder); a failed write removes its temporary file, and one left by a crash is for the folder's owner to sweep.
 * Two writes of one file at once each go through their own temporary file: the last rename wins, whole.
 */
export async function writeFileAtomic(file: string, data: string | Uint8Array): Promise<void> {
  await fs.promises.mkdir(path.dirname(file), { recursive: true });
  const tmp = `${file}.${randomBytes(4).toString('hex')}.tmp-${process.pid}`;
  try {
    const fh = await fs.promises.open(tmp, 'w');
    try {
      await fh.writeFile(data);
      await fh.sync();
    } finally {
      await fh.close();
    }
    await renameDurably(tmp, file);
  } catch (error) {
    await fs.promises.rm(tmp, { force: true });
    throw error;
  }
}
