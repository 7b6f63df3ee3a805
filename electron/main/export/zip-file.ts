import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';

import { ZipFile } from 'yazl';

import { renameDurably, syncFile } from '../../node/atomic-write.js';

/** manifest.json's `files`: each file's name, size and sha256, in order. */
export function listedZipFiles(files: Iterable<readonly [string, Buffer]>): { name: string; bytes: number; sha256: string }[] {
  return [...files].map(([name, b]) => ({ name, bytes: b.length, sha256: createHash('sha256').update(b).digest('hex') }));
}

/**
 * Writes `entries` (in order, each stamped `mtime`) as a ZIP at `outPath` through a temp file, flushed and renamed
 * into place: a reader never sees half a ZIP. `what` names it in an error ("result ZIP").
 */
export async function writeZipAtomically(
  outPath: string,
  entries: Iterable<readonly [string, Buffer]>,
  mtime: Date,
  what: string,
): Promise<{ path: string; bytes: number; sha256: string }> {
  const out = path.resolve(outPath);
  await mkdir(path.dirname(out), { recursive: true });
  const tmp = `${out}.${process.pid}.${Date.now()}.tmp`;
  const zip = new ZipFile();
  for (const [name, b] of entries) zip.addBuffer(b, name, { mtime });
  zip.end();
  const hash = createHash('sha256');
  zip.outputStream.on('data', (chunk: Buffer) => hash.update(chunk));
  try {
    await pipeline(zip.outputStream, createWriteStream(tmp));
    await syncFile(tmp);
    await renameDurably(tmp, out);
  } catch (e) {
    await rm(tmp, { force: true });
    throw new Error(`${out}: writing the ${what} failed (${(e as Error).message})`, { cause: e });
  }
  return { path: out, bytes: (await stat(out)).size, sha256: hash.digest('hex') };
}
