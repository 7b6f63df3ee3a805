import { mkdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { LockBusyError, takeLockFile } from '../node/lock-file.js';

/** The folder holding models, eval assets, the database and exports: `$HORIZON_DATA_DIR` or the platform's app-data folder. */
export function defaultDataDir(env: NodeJS.ProcessEnv = process.env, platform: NodeJS.Platform = process.platform): string {
  if (env.HORIZON_DATA_DIR) return path.resolve(env.HORIZON_DATA_DIR);
  if (platform === 'win32') {
    const appData = env.APPDATA ?? path.join(os.homedir(), 'AppData', 'Roaming');
    return path.win32.join(appData, 'Horizon RunMap');
  }
  if (platform === 'darwin') return path.join(os.homedir(), 'Library', 'Application Support', 'Horizon RunMap');
  const xdg = env.XDG_DATA_HOME && path.isAbsolute(env.XDG_DATA_HOME) ? env.XDG_DATA_HOME : path.join(os.homedir(), '.local', 'share');
  return path.join(xdg, 'horizon-runmap');
}

/** Paths inside a data dir; see "Data and models" in README.md. */
export const dataLayout = {
  /** `models/<org>--<name>/<commit>`: one prepared revision. */
  modelDir: (dataDir: string, repo: string, commit: string): string =>
    path.join(dataDir, 'models', repo.split('/').join('--'), commit),
  /** The downloaded checkpoint, byte for byte as on the Hub. */
  sourceDir: (modelDir: string): string => path.join(modelDir, 'source'),
  /** The qpacked-v2 INT4 folder with group size G. */
  packedDir: (modelDir: string, groupSize: number): string => path.join(modelDir, `int4-g${groupSize}`),
  /** Written last: the model is ready only when it verifies. */
  preparedManifest: (modelDir: string): string => path.join(modelDir, 'prepared.json'),
  ifevalDir: (dataDir: string): string => path.join(dataDir, 'assets', 'ifeval'),
  punktDir: (dataDir: string): string => path.join(dataDir, 'assets', 'nltk', 'punkt_english'),
  database: (dataDir: string): string => path.join(dataDir, 'runmap.sqlite'),
  exportsDir: (dataDir: string): string => path.join(dataDir, 'exports'),
};

/** The error of a run found running by a process that has just taken its data folder: the one running it stopped. */
/** The error of a campaign found running the same way: its measured requests are kept, the rest never ran. */
export const INTERRUPTED_CAMPAIGN = 'the process running it stopped while it was measuring; the requests measured before are kept';

export const INTERRUPTED_RUN =
  'the process running it (the app, horizon serve or horizon eval) stopped while it was in progress; resume it to continue';

/**
 * Takes the data folder for this process and returns its release. One user at a time (the app, `horizon serve` or
 * `horizon eval`): each marks the runs it finds running as interrupted when it starts, which would fail another's
 * live run.
 */
export function lockDataDir(dataDir: string): () => void {
  const lock = path.join(dataDir, '.runmap.lock');
  try {
    mkdirSync(dataDir, { recursive: true });
    return takeLockFile(lock);
  } catch (error) {
    if (error instanceof LockBusyError) {
      const who = error.holder === 'this process' ? 'this process' : `process ${error.holder}`;
      // A pid can outlive its lock: after a crash and a reboot another program may have it (where the system cannot
      // tell, see lock-file.ts); the user is the one who can check.
      const stale = error.holder === 'this process' ? '' : ` (if process ${error.holder} is none of these, delete ${lock})`;
      throw new Error(`${dataDir} is in use by ${who} (the Horizon RunMap app, horizon serve or horizon eval); close it first${stale}`, {
        cause: error,
      });
    }
    const code = (error as NodeJS.ErrnoException).code;
    const why = code === 'EROFS' ? 'it is on a read-only medium' : code === 'EACCES' || code === 'EPERM' ? 'permission denied' : undefined;
    if (!why && !code) throw error;
    throw new Error(
      `${dataDir}: cannot use this data folder (${why ? `${why}, ${code}` : (error as Error).message}); choose a writable one with ` +
        '--data-dir or HORIZON_DATA_DIR',
      { cause: error },
    );
  }
}
