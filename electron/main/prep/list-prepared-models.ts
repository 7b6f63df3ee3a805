import fs from 'node:fs';
import path from 'node:path';

import { PREPARED_MANIFEST, readPreparedManifest, verifyPreparedFiles, type PreparedManifest } from './prepared-manifest.js';

/** A prepared model found under `<dataDir>/models`. */
export type PreparedModel = {
  readonly repo: string;
  readonly commit: string;
  readonly modelDir: string;
  readonly sourceDir: string;
  /** The qpacked-v2 folder, or null when the model was prepared without packing. */
  readonly packedDir: string | null;
  readonly groupSize: number | null;
  /** True only when the manifest verified; `problems` says why not. */
  readonly ready: boolean;
  readonly problems: readonly string[];
  readonly manifest: PreparedManifest | null;
};

/**
 * Lists every `models/<org>--<name>/<commit>/prepared.json` under `dataDir`; a model is ready only when all its files
 * exist with the recorded sizes (and, with `verify`, the recorded sha256).
 */
export async function listPreparedModels(dataDir: string, opts: { verify?: boolean } = {}): Promise<PreparedModel[]> {
  const root = path.join(dataDir, 'models');
  const out: PreparedModel[] = [];
  let repoDirs: string[];
  try {
    repoDirs = (await fs.promises.readdir(root, { withFileTypes: true })).filter((d) => d.isDirectory()).map((d) => d.name).sort();
  } catch {
    return out;
  }
  for (const repoDir of repoDirs) {
    const commits = (await fs.promises.readdir(path.join(root, repoDir), { withFileTypes: true })).filter((d) => d.isDirectory()).map((d) => d.name).sort();
    for (const commit of commits) {
      const modelDir = path.join(root, repoDir, commit);
      if (!fs.existsSync(path.join(modelDir, PREPARED_MANIFEST))) continue;
      const fallbackRepo = repoDir.replace('--', '/');
      try {
        const manifest = await readPreparedManifest(modelDir);
        const problems = await verifyPreparedFiles(modelDir, manifest, opts.verify === true);
        if (manifest.commit !== commit) problems.push(`prepared.json records commit ${manifest.commit} but lives in ${commit}`);
        out.push({
          repo: manifest.repo,
          commit: manifest.commit,
          modelDir,
          sourceDir: path.join(modelDir, manifest.source.dir),
          packedDir: manifest.pack ? path.join(modelDir, manifest.pack.dir) : null,
          groupSize: manifest.pack?.groupSize ?? null,
          ready: problems.length === 0,
          problems,
          manifest,
        });
      } catch (error) {
        out.push({
          repo: fallbackRepo,
          commit,
          modelDir,
          sourceDir: path.join(modelDir, 'source'),
          packedDir: null,
          groupSize: null,
          ready: false,
          problems: [(error as Error).message],
          manifest: null,
        });
      }
    }
  }
  return out;
}
