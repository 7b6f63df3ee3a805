import fs from 'node:fs';
import path from 'node:path';

import type { QPACKED_FORMAT } from '../../common/qpacked-format.js';
import { writeFileAtomic } from '../../node/atomic-write.js';
import { hashFile, type FileDigest } from '../../node/file-hasher.js';
import { PrepError } from './prep-error.js';

/** A file of a prepared model, relative to its folder. */
export type PreparedFile = { readonly path: string; readonly size: number; readonly sha256: string };

/** `prepared.json`: written last; a model is ready only when it verifies. */
export type PreparedManifest = {
  readonly format: 'horizon-prepared-v1';
  readonly repo: string;
  /** The revision asked for (branch, tag or sha). */
  readonly revision: string;
  /** The commit sha it resolved to. */
  readonly commit: string;
  readonly hubUrl: string;
  readonly source: { readonly dir: string; readonly files: readonly PreparedFile[] };
  /** Null when prepared with `--no-pack`. */
  readonly pack: {
    readonly dir: string;
    readonly format: typeof QPACKED_FORMAT;
    readonly groupSize: number;
    readonly files: readonly PreparedFile[];
  } | null;
  readonly tool: 'horizon-runmap';
  readonly toolVersion: string;
  readonly createdAt: string;
};

export const PREPARED_MANIFEST = 'prepared.json';

/** Writes `<modelDir>/prepared.json` through a temp file and a rename. */
export async function writePreparedManifest(modelDir: string, manifest: PreparedManifest): Promise<string> {
  const file = path.join(modelDir, PREPARED_MANIFEST);
  await writeFileAtomic(file, `${JSON.stringify(manifest, null, 2)}\n`);
  return file;
}

function isFileList(v: unknown): v is PreparedFile[] {
  return (
    Array.isArray(v) &&
    v.every((f) => f && typeof f.path === 'string' && Number.isInteger(f.size) && typeof f.sha256 === 'string' && /^[0-9a-f]{64}$/.test(f.sha256))
  );
}

/** Reads and shape-checks `<modelDir>/prepared.json`. */
export async function readPreparedManifest(modelDir: string): Promise<PreparedManifest> {
  const file = path.join(modelDir, PREPARED_MANIFEST);
  let m: PreparedManifest;
  try {
    m = JSON.parse(await fs.promises.readFile(file, 'utf8')) as PreparedManifest;
  } catch (error) {
    throw new PrepError('MODEL_INVALID', `${file}: unreadable (${(error as Error).message})`);
  }
  const okPack = m?.pack === null || (m?.pack && typeof m.pack.dir === 'string' && Number.isInteger(m.pack.groupSize) && isFileList(m.pack.files));
  if (m?.format !== 'horizon-prepared-v1' || typeof m.repo !== 'string' || typeof m.commit !== 'string' || !isFileList(m.source?.files) || !okPack) {
    throw new PrepError('MODEL_INVALID', `${file}: not a horizon-prepared-v1 manifest`);
  }
  return m;
}

/** Every file prepared.json lists, as a '/'-separated path relative to the model folder with what it records. */
export function listedFiles(manifest: PreparedManifest): { rel: string; file: PreparedFile }[] {
  const groups = [{ dir: manifest.source.dir, files: manifest.source.files }, ...(manifest.pack ? [{ dir: manifest.pack.dir, files: manifest.pack.files }] : [])];
  return groups.flatMap((g) => g.files.map((file) => ({ rel: `${g.dir}/${file.path}`, file })));
}

/**
 * Problems found checking the manifest's files under `modelDir` (sizes, or sha256 too when `rehash`); empty when it
 * verifies. Ends with a CANCELLED PrepError once `signal` aborts.
 */
export async function verifyPreparedFiles(modelDir: string, manifest: PreparedManifest, rehash = false, signal?: AbortSignal): Promise<string[]> {
  const cancelled = (): PrepError => new PrepError('CANCELLED', `${modelDir}: verification cancelled`);
  const problems: string[] = [];
  for (const { rel: listed, file: f } of listedFiles(manifest)) {
    if (signal?.aborted) throw cancelled();
    const rel = path.join(...listed.split('/'));
    const abs = path.join(modelDir, rel);
    if (path.relative(modelDir, abs).startsWith('..')) {
      problems.push(`${rel}: outside the model folder`);
      continue;
    }
    let size: number;
    try {
      size = (await fs.promises.stat(abs)).size;
    } catch {
      problems.push(`${rel}: missing`);
      continue;
    }
    if (size !== f.size) problems.push(`${rel}: ${size} bytes, expected ${f.size}`);
    else if (rehash) {
      let digest: FileDigest;
      try {
        digest = await hashFile(abs, signal ? { signal } : {});
      } catch (error) {
        if (signal?.aborted) throw cancelled();
        throw error;
      }
      if (digest.sha256 !== f.sha256) problems.push(`${rel}: sha256 ${digest.sha256}, expected ${f.sha256}`);
    }
  }
  return problems;
}
