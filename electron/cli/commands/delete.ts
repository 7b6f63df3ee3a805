import path from 'node:path';

import { isLiveStatus } from '../../common/ipc-contract.js';
import { dataLayout, defaultDataDir } from '../../main/data-dir.js';
import { PerfRepo } from '../../main/db/perf-repo.js';
import { RunRepo } from '../../main/db/run-repo.js';
import { deleteExportFiles, exportFiles } from '../../main/export/export-files.js';
import { dataDirOption, parseCommandArgs, usageError } from '../command-args.js';
import { claimLeftRunning, openStoredRuns } from '../stored-runs.js';

export const summary = 'delete a stored run with its responses, or a campaign (and, with --delete-export, its ZIP)';

const USAGE = `usage: horizon delete RUN_ID [--delete-export] [--db FILE] [--data-dir DIR]
       horizon delete --campaign CAMPAIGN_ID [--delete-export] [--db FILE] [--data-dir DIR]
  RUN_ID           a stored run that is not running (horizon export --list lists them)
  --delete-export  also delete its ZIP in <data dir>/exports/ (<id>.zip, the name export gives it)
  --campaign       delete a performance campaign (measured here or imported; horizon perf --list lists them) with its
                   requests instead
  --db             SQLite file (default <data dir>/runmap.sqlite)
  --data-dir       data folder (default $HORIZON_DATA_DIR or the platform app-data folder)`;

export async function run(args: string[]): Promise<number> {
  const parsed = parseCommandArgs(
    'delete',
    USAGE,
    args,
    { 'delete-export': { type: 'boolean' }, campaign: { type: 'boolean' }, db: { type: 'string' }, 'data-dir': { type: 'string' } },
    { positionals: true },
  );
  if (typeof parsed === 'number') return parsed;
  const { values, positionals } = parsed;
  if (positionals.length !== 1) {
    return usageError('delete', USAGE, values.campaign ? 'give one CAMPAIGN_ID' : 'give one RUN_ID (see horizon export --list)');
  }
  const id = positionals[0] ?? '';
  const dataDir = dataDirOption(values, defaultDataDir);
  const exportsDir = dataLayout.exportsDir(dataDir);
  const dbFile = path.resolve(values.db ?? dataLayout.database(dataDir));
  const db = openStoredRuns('delete', dbFile);
  if (!db) return 1;
  try {
    if (!(values.campaign ? deleteCampaign(new PerfRepo(db), id, dbFile) : deleteRun(new RunRepo(db), id, dbFile))) return 1;
  } finally {
    db.close();
  }
  const what = values.campaign ? 'campaign' : 'run';
  const zipName = values.campaign ? 'campaign ZIP' : 'result ZIP';
  if (!values['delete-export']) {
    for (const f of await exportFiles(exportsDir, id).catch(() => [])) {
      console.log(`kept its ${zipName} ${f.path} (--delete-export deletes it)`);
    }
    return 0;
  }
  const files = await deleteExportFiles(exportsDir, id);
  for (const f of files.deleted) console.log(`deleted ${f}`);
  if (files.deleted.length === 0 && files.errors.length === 0) console.log(`no ZIP of ${what} ${id} in ${exportsDir}`);
  for (const e of files.errors) console.error(`horizon delete: ${e}`);
  return files.errors.length > 0 ? 1 : 0;
}

/** Deletes a run; one stored as queued or running only when no process holds the data folder (see deleteCampaign). */
function deleteRun(runs: RunRepo, id: string, dbFile: string): boolean {
  const stored = runs.get(id);
  if (!stored) {
    console.error(`horizon delete: run ${id} not found in ${dbFile} (see horizon export --list)`);
    return false;
  }
  let unlock: (() => void) | undefined;
  if (isLiveStatus(stored.status)) {
    const claim = claimLeftRunning(runs, dbFile);
    if ('busy' in claim) {
      console.error(`horizon delete: run ${id} is still ${stored.status}: cancel it before deleting it (${claim.busy})`);
      return false;
    }
    // Held until the run is deleted: no process may start it meanwhile.
    unlock = claim.release;
  }
  try {
    const outcome = runs.delete(id);
    if (!outcome.deleted) {
      console.error(`horizon delete: run ${id} is ${outcome.status === 'missing' ? 'no longer in the database' : `${outcome.status}: cancel it before deleting it`}`);
      return false;
    }
    console.log(`deleted run ${id} (${outcome.responses} ${outcome.responses === 1 ? 'response' : 'responses'}) from ${dbFile}`);
    return true;
  } finally {
    unlock?.();
  }
}

/**
 * Deletes a campaign. One stored as running is deleted only when no process holds the data folder: it was left so by
 * one that stopped, and is first marked as the app marks such campaigns when it starts.
 */
function deleteCampaign(perf: PerfRepo, id: string, dbFile: string): boolean {
  let outcome = perf.delete(id);
  if (!outcome.deleted && outcome.status === 'running') {
    const claim = claimLeftRunning(perf, dbFile);
    if ('busy' in claim) {
      console.error(`horizon delete: campaign ${id} is running: cancel it before deleting it (${claim.busy})`);
      return false;
    }
    try {
      outcome = perf.delete(id);
    } finally {
      claim.release();
    }
  }
  if (!outcome.deleted) {
    console.error(`horizon delete: campaign ${id} ${outcome.status === 'missing' ? `not found in ${dbFile} (see horizon perf --list)` : 'is running: cancel it before deleting it'}`);
    return false;
  }
  console.log(`deleted campaign ${id} (${outcome.requests} ${outcome.requests === 1 ? 'request' : 'requests'}) from ${dbFile}`);
  return true;
}
