import path from 'node:path';

import { normalizeRunLabel, runLabelProblem } from '../../common/run-label.js';
import { dataLayout, defaultDataDir } from '../../main/data-dir.js';
import { RunRepo } from '../../main/db/run-repo.js';
import { dataDirOption, parseCommandArgs, usageError } from '../command-args.js';
import { openStoredRuns } from '../stored-runs.js';

export const summary = 'label a stored run ("baseline g32"), or clear its label';

const USAGE = `usage: horizon label RUN_ID TEXT [--db FILE] [--data-dir DIR]
       horizon label RUN_ID --clear [--db FILE] [--data-dir DIR]
  RUN_ID      a stored run, running or not, made here or imported (horizon export --list lists them with their labels)
  TEXT        one line of at most 80 characters, trimmed; History, Results, comparisons and result ZIPs show it
  --clear     remove the run's label
  --db        SQLite file (default <data dir>/runmap.sqlite)
  --data-dir  data folder (default $HORIZON_DATA_DIR or the platform app-data folder)
An open app shows the new label within seconds.`;

export async function run(args: string[]): Promise<number> {
  const parsed = parseCommandArgs(
    'label',
    USAGE,
    args,
    { clear: { type: 'boolean' }, db: { type: 'string' }, 'data-dir': { type: 'string' } },
    { positionals: true },
  );
  if (typeof parsed === 'number') return parsed;
  const { values, positionals } = parsed;
  const [runId, text, ...extra] = positionals;
  if (!runId || extra.length > 0 || (values.clear ? text !== undefined : text === undefined)) {
    return usageError('label', USAGE, values.clear ? 'give one RUN_ID with --clear, and no TEXT' : 'give one RUN_ID and its TEXT (quoted), or --clear');
  }
  const label = values.clear ? null : normalizeRunLabel(text ?? '');
  if (!values.clear && label === null) return usageError('label', USAGE, 'TEXT is empty; --clear removes a label');
  const problem = label === null ? null : runLabelProblem(label);
  if (problem) return usageError('label', USAGE, problem);
  const dbFile = path.resolve(values.db ?? dataLayout.database(dataDirOption(values, defaultDataDir)));
  const db = openStoredRuns('label', dbFile);
  if (!db) return 1;
  try {
    if (!new RunRepo(db).setLabel(runId, label)) {
      console.error(`horizon label: run ${runId} not found in ${dbFile} (see horizon export --list)`);
      return 1;
    }
  } finally {
    db.close();
  }
  console.log(label === null ? `cleared the label of run ${runId}` : `labelled run ${runId} "${label}"`);
  return 0;
}
