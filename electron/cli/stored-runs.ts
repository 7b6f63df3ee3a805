import { existsSync } from 'node:fs';
import path from 'node:path';

import type Database from 'better-sqlite3';

import { INTERRUPTED_CAMPAIGN, INTERRUPTED_RUN, lockDataDir } from '../main/data-dir.js';
import { openDatabase } from '../main/db/open-database.js';
import { PerfRepo } from '../main/db/perf-repo.js';
import type { RunRepo } from '../main/db/run-repo.js';

/**
 * The database of stored runs for a command that reads or deletes them, or null after saying there is none: such a
 * command must not create one (a mistyped --db or --data-dir would find nothing and exit 0).
 */
export function openStoredRuns(command: string, dbFile: string): Database.Database | null {
  if (!existsSync(dbFile)) {
    console.error(`horizon ${command}: no database at ${dbFile} (no run was stored there; check --db or --data-dir)`);
    return null;
  }
  return openDatabase(dbFile);
}

/**
 * For a run (or campaign) stored as queued or running: only a process holding the database's folder runs them, so
 * when none does it was left so by one that stopped, and is marked as the app marks such runs and campaigns when it
 * starts. Gives the folder's release (held while the caller needs nothing to start there), or why a live process
 * holds the folder.
 */
export function claimLeftRunning(
  repo: RunRepo | PerfRepo,
  dbFile: string,
): { readonly release: () => void } | { readonly busy: string } {
  let release: () => void;
  try {
    release = lockDataDir(path.dirname(dbFile));
  } catch (e) {
    return { busy: (e as Error).message };
  }
  try {
    repo.failInterrupted(repo instanceof PerfRepo ? INTERRUPTED_CAMPAIGN : INTERRUPTED_RUN);
  } catch (e) {
    release();
    throw e;
  }
  return { release };
}
