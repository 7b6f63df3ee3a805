import { lstat, readdir, unlink } from 'node:fs/promises';
import path from 'node:path';

import type { ExportFile } from '../../common/ipc-contract.js';
import { processAlive } from '../../node/lock-file.js';

/** The names in the exports folder; none when there is no folder. */
async function exportNames(exportsDir: string): Promise<string[]> {
  try {
    return await readdir(exportsDir);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT' || (e as NodeJS.ErrnoException).code === 'ENOTDIR') return [];
    throw e;
  }
}

/**
 * The ZIPs of run or campaign `id` among `names` of `exportsDir`: the file export writes there for it (`<id>.zip`, the
 * default name of the app's, `horizon export`'s and `horizon eval`'s result ZIPs and of campaign ZIPs). Run and campaign
 * ids never share a name: campaigns' start with `perf-`, runs' never do (the importers hold both to it). Names are
 * matched against the folder's own listing, so an id can never reach a subfolder or a path outside it, and only regular
 * files count: a link (to anywhere) or a folder under that name is left alone.
 */
async function zipsAmong(exportsDir: string, names: readonly string[], id: string): Promise<ExportFile[]> {
  const wanted = `${id}.zip`;
  const out: ExportFile[] = [];
  for (const name of names) {
    if (name !== wanted) continue;
    const file = path.join(exportsDir, name);
    const info = await lstat(file).catch(() => null);
    if (info?.isFile()) out.push({ path: file, name, bytes: info.size });
  }
  return out;
}

/** The ZIPs of run or campaign `id` in `exportsDir` (see zipsAmong). No folder: none. */
export async function exportFiles(exportsDir: string, id: string): Promise<ExportFile[]> {
  return zipsAmong(exportsDir, await exportNames(exportsDir), id);
}

/** What an export of `id` that never finished leaves: zip-file's `<id>.zip.<pid>.<ms>.tmp`, its writer dead. */
function abandonedExportTemps(exportsDir: string, names: readonly string[], id: string): string[] {
  const prefix = `${id}.zip.`;
  return names
    .filter((n) => {
      if (!n.startsWith(prefix)) return false;
      const m = /^(\d+)\.\d+\.tmp$/.exec(n.slice(prefix.length));
      return m !== null && !processAlive(Number(m[1]));
    })
    .map((n) => path.join(exportsDir, n));
}

/**
 * Deletes the files `exportFiles` lists for run or campaign `id`, and what its interrupted exports left behind;
 * `unlink` removes a name, never what a link (swapped in meanwhile) points to. Returns the paths deleted and one line
 * per file that could not be.
 */
export async function deleteExportFiles(exportsDir: string, id: string): Promise<{ deleted: string[]; errors: string[] }> {
  const deleted: string[] = [];
  const errors: string[] = [];
  let names: string[];
  let files: ExportFile[];
  try {
    names = await exportNames(exportsDir);
    files = await zipsAmong(exportsDir, names, id);
  } catch (e) {
    return { deleted, errors: [`${exportsDir}: not read, nothing in it deleted (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`] };
  }
  for (const f of [...files.map((x) => x.path), ...abandonedExportTemps(exportsDir, names, id)]) {
    try {
      await unlink(f);
      deleted.push(f);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') continue;
      errors.push(`${f}: not deleted (${code ?? (e as Error).message})`);
    }
  }
  return { deleted, errors };
}
