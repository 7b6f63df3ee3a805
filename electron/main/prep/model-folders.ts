/**
 * A prepared model's folders as a user sees them: each variant's files and how it was made, and deleting an INT4
 * pack or the whole prepared revision without leaving a manifest that lists what is gone.
 */
import fs from 'node:fs';
import path from 'node:path';

import type { ModelFile } from '../../common/ipc-contract.js';
import { QPACKED_CODEBOOK, QPACKED_FORMAT } from '../../common/qpacked-format.js';
import { writeFileAtomic } from '../../node/atomic-write.js';
import { readPackedManifest, VERIFIED_RECORD } from './model-integrity.js';
import { PREPARED_MANIFEST, readPreparedManifest } from './prepared-manifest.js';
import { qualityReportFile } from './quality-report.js';

/** Every file under `dir`, relative and '/'-separated, sorted. */
export async function listFiles(dir: string): Promise<ModelFile[]> {
  const out: ModelFile[] = [];
  const walk = async (d: string): Promise<void> => {
    for (const e of (await fs.promises.readdir(d, { withFileTypes: true })).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) await walk(p);
      else if (e.isFile()) out.push({ path: path.relative(dir, p).split(path.sep).join('/'), bytes: (await fs.promises.stat(p)).size });
    }
  };
  await walk(dir).catch((e: NodeJS.ErrnoException) => {
    if (e.code !== 'ENOENT') throw e;
  });
  return out;
}

/** Bytes of every file under `dir` (0 when it is not there). */
export async function folderBytes(dir: string): Promise<number> {
  return (await listFiles(dir)).reduce((n, f) => n + f.bytes, 0);
}

/** The scheme of a packed folder, read from its horizon-manifest.json: 4 bits a weight plus one FP16 scale a group. */
export async function packScheme(packedDir: string): Promise<{ format: string; codebook: string; groupSize: number; bitsPerWeight: number }> {
  // readPackedManifest refuses any other format or codebook than these.
  const m = await readPackedManifest(packedDir);
  return { format: QPACKED_FORMAT, codebook: QPACKED_CODEBOOK, groupSize: m.groupSize, bitsPerWeight: 4 + 16 / m.groupSize };
}

/**
 * Deletes the INT4 pack of a prepared model: prepared.json is rewritten without it first (temp + rename), so a stop
 * part-way leaves an unlisted folder (a later preparation reuses or replaces it), never a listed one half gone.
 */
export async function deletePack(modelDir: string): Promise<{ deletedDir: string; freedBytes: number }> {
  const manifest = await readPreparedManifest(modelDir);
  if (!manifest.pack) throw new Error(`${modelDir}: prepared without an INT4 pack; nothing to delete`);
  const packedDir = path.join(modelDir, manifest.pack.dir);
  const freedBytes = await folderBytes(packedDir);
  await writeFileAtomic(path.join(modelDir, PREPARED_MANIFEST), `${JSON.stringify({ ...manifest, pack: null }, null, 2)}\n`);
  await fs.promises.rm(qualityReportFile(modelDir, packedDir), { force: true });
  await fs.promises.rm(packedDir, { recursive: true, force: true });
  return { deletedDir: packedDir, freedBytes };
}

/**
 * Deletes a whole prepared revision: prepared.json goes first, so the model leaves every listing at once; what a
 * stop leaves behind is an unprepared folder that the next preparation of that revision resumes into.
 */
export async function deletePreparedModel(modelDir: string): Promise<{ deletedDir: string; freedBytes: number }> {
  await readPreparedManifest(modelDir);
  const freedBytes = await folderBytes(modelDir);
  await fs.promises.rm(path.join(modelDir, PREPARED_MANIFEST));
  await fs.promises.rm(path.join(modelDir, VERIFIED_RECORD), { force: true });
  await fs.promises.rm(modelDir, { recursive: true, force: true });
  // The repository's folder goes too once it holds no other revision.
  const repoDir = path.dirname(modelDir);
  if ((await fs.promises.readdir(repoDir).catch(() => ['?'])).length === 0) await fs.promises.rmdir(repoDir).catch(() => undefined);
  return { deletedDir: modelDir, freedBytes };
}
