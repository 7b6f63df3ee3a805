import type { ZipOrigin } from '../../common/ipc-contract.js';

/** The columns migration 0006 gave `runs` and `perf_campaigns`: all NULL for one made here, all set for an import. */
export interface OriginColumns {
  imported_from: string | null;
  imported_sha256: string | null;
  imported_at: string | null;
}

/** Where a stored run or campaign came from, read off its row. */
export function originOf(r: OriginColumns): ZipOrigin | null {
  return r.imported_from !== null && r.imported_sha256 !== null && r.imported_at !== null
    ? { file: r.imported_from, sha256: r.imported_sha256, importedAt: r.imported_at }
    : null;
}
