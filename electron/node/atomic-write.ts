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

/**
 * Rename errors that on Windows mean another process has one of the two files open for a moment (an antivirus scan of
 * the file just written, the Search indexer, a viewer of the file being replaced): the rename succeeds once it lets go.
 */
const TRANSIENT_RENAME_ERRORS = new Set(['EPERM', 'EACCES', 'EBUSY']);
/** How long a rename keeps retrying those (graceful-fs waits up to 60 s; a held-open file rarely needs more than seconds). */
export const RENAME_RETRY_MS = 10_000;

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * `fs.promises.rename`, retried with a growing delay for up to `retryMs` while Windows answers EPERM, EACCES or EBUSY
 * (not when the destination is a folder: that answer is final). Elsewhere those answers are final and come at once.
 */
export async function renameRetrying(
  from: string,
  to: string,
  opts: { platform?: NodeJS.Platform; retryMs?: number } = {},
): Promise<void> {
  const platform = opts.platform ?? process.platform;
  const deadline = Date.now() + (opts.retryMs ?? RENAME_RETRY_MS);
  for (let delay = 10; ; delay = Math.min(delay * 2, 500)) {
    try {
      await fs.promises.rename(from, to);
      return;
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? '';
      if (platform !== 'win32' || !TRANSIENT_RENAME_ERRORS.has(code) || Date.now() + delay > deadline) throw error;
      const dest = await fs.promises.stat(to).catch(() => undefined);
      if (dest?.isDirectory()) throw error;
      await sleep(delay);
    }
  }
}

/** Renames a finished, flushed temporary file into place (retrying while Windows reports it held open) and flushes the folder. */
export async function renameDurably(tmp: string, file: string, opts: { platform?: NodeJS.Platform; retryMs?: number } = {}): Promise<void> {
  await renameRetrying(tmp, file, opts);
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
