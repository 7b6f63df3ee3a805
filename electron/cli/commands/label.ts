import path from 'node:path';

import { readLabel } from '../../common/label.js';
import { dataLayout, defaultDataDir } from '../../main/data-dir.js';
import { PerfRepo } from '../../main/db/perf-repo.js';
import { RunRepo } from '../../main/db/run-repo.js';
import { dataDirOption, parseCommandArgs, usageError } from '../command-args.js';
import { openStoredRuns } from '../stored-runs.js';

export const summary = 'label a stored run or campaign ("baseline g32"), or clear its label';

const USAGE = `usage: horizon label RUN_ID TEXT | --clear [--db FILE] [--data-dir DIR]
       horizon label --campaign CAMPAIGN_ID TEXT | --clear [--db FILE] [--data-dir DIR]
  RUN_ID      a stored run, running or not, made here or imported (horizon export --list lists them with their labels)
  TEXT        one line of at most 80 characters, trimmed; the app, comparisons and exported ZIPs show it
  --clear     remove the label
  --campaign  label a performance campaign instead (horizon perf --list lists them)
  --db        SQLite file (default <data dir>/runmap.sqlite)
  --data-dir  data folder (default $HORIZON_DATA_DIR or the platform app-data folder)
An open app shows the new label within seconds.`;

export async function run(args: string[]): Promise<number> {
  const parsed = parseCommandArgs(
    'label',
    USAGE,
    args,
    { clear: { type: 'boolean' }, campaign: { type: 'boolean' }, db: { type: 'string' }, 'data-dir': { type: 'string' } },
    { positionals: true },
  );
  if (typeof parsed === 'number') return parsed;
  const { values, positionals } = parsed;
  const what = values.campaign ? 'campaign' : 'run';
  const ID = values.campaign ? 'CAMPAIGN_ID' : 'RUN_ID';
  const [id, text, ...extra] = positionals;
  if (!id || extra.length > 0 || (values.clear ? text !== undefined : text === undefined)) {
    return usageError('label', USAGE, values.clear ? `give one ${ID} with --clear, and no TEXT` : `give one ${ID} and its TEXT (quoted), or --clear`);
  }
  const { label, problem } = values.clear ? { label: null, problem: null } : readLabel(text ?? '');
  if (problem) return usageError('label', USAGE, problem);
  if (!values.clear && label === null) return usageError('label', USAGE, 'TEXT is empty; --clear removes a label');
  const dbFile = path.resolve(values.db ?? dataLayout.database(dataDirOption(values, defaultDataDir)));
  const db = openStoredRuns('label', dbFile);
  if (!db) return 1;
  try {
    if (!(values.campaign ? new PerfRepo(db) : new RunRepo(db)).setLabel(id, label)) {
      console.error(`horizon label: ${what} ${id} not found in ${dbFile} (see horizon ${values.campaign ? 'perf' : 'export'} --list)`);
      return 1;
    }
  } finally {
    db.close();
  }
  console.log(label === null ? `cleared the label of ${what} ${id}` : `labelled ${what} ${id} "${label}"`);
  return 0;
}
