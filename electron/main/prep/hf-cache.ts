import fs from 'node:fs';
import path from 'node:path';

import { getHFHubCachePath, getRepoFolderName } from '@huggingface/hub';

/** The standard HF cache folder (`HF_HUB_CACHE`, else `HF_HOME/hub`, else `~/.cache/huggingface/hub`). */
export function hfCacheDir(): string {
  return getHFHubCachePath();
}

/** `<cache>/models--org--name/snapshots/<commit>`, where huggingface_hub keeps a revision's files. */
export function hfSnapshotDir(cacheDir: string, repo: string, commit: string): string {
  return path.join(cacheDir, getRepoFolderName({ name: repo, type: 'model' }), 'snapshots', commit);
}

/** The real path of a repo file in the HF cache, when present as a regular file (snapshot entries are symlinks to blobs). */
export async function findCachedFile(cacheDir: string, repo: string, commit: string, filePath: string): Promise<string | undefined> {
  const candidate = path.join(hfSnapshotDir(cacheDir, repo, commit), ...filePath.split('/'));
  try {
    const real = await fs.promises.realpath(candidate);
    return (await fs.promises.stat(real)).isFile() ? real : undefined;
  } catch {
    return undefined;
  }
}
