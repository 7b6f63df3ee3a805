import path from 'node:path';

import { isLiveStatus } from '../../common/ipc-contract.js';
import { dataLayout, defaultDataDir } from '../../main/data-dir.js';
import { ResponseRepo } from '../../main/db/response-repo.js';
import { RunRepo } from '../../main/db/run-repo.js';
import { writeResultZip } from '../../main/export/write-result-zip.js';
import { loadEvalInputs } from '../../main/jobs/eval-inputs.js';
import { dataDirOption, parseCommandArgs, usageError } from '../command-args.js';
import { claimLeftRunning, openStoredRuns } from '../stored-runs.js';

export const summary = 'write the result ZIP of a stored run (or list the runs)';

const USAGE = `usage: horizon export RUN_ID [--out RESULT.zip] [--db FILE] [--data-dir DIR]
       horizon export --list [--db FILE] [--data-dir DIR]
  RUN_ID      a stored run (--list lists them: id, status, responses, model, backend, start, its label in quotes, and
              where an imported run came from)
  --out       result ZIP (default <data dir>/exports/<run id>.zip)
  --db        SQLite file (default <data dir>/runmap.sqlite)
  --data-dir  data folder (default $HORIZON_DATA_DIR or the platform app-data folder)`;

export async function run(args: string[]): Promise<number> {
  const parsed = parseCommandArgs(
    'export',
    USAGE,
    args,
    { out: { type: 'string' }, db: { type: 'string' }, 'data-dir': { type: 'string' }, list: { type: 'boolean' } },
    { positionals: true },
  );
  if (typeof parsed === 'number') return parsed;
  const { values, positionals } = parsed;
  const dataDir = dataDirOption(values, defaultDataDir);
  if (values.list ? positionals.length > 0 : positionals.length !== 1) {
    return usageError('export', USAGE, values.list ? '--list takes no RUN_ID' : 'give one RUN_ID (see --list)');
  }
  const dbFile = path.resolve(values.db ?? dataLayout.database(dataDir));
  const db = openStoredRuns('export', dbFile);
  if (!db) return 1;
  try {
    const runs = new RunRepo(db);
    const responses = new ResponseRepo(db);
    if (values.list) {
      const list = runs.list();
      if (list.length === 0) console.log(`no runs in ${dbFile}`);
      for (const r of list) {
        const label = r.label !== null ? `  ${JSON.stringify(r.label)}` : '';
        const origin = r.imported ? `  imported from ${r.imported.file}` : '';
        console.log(`${r.id}  ${r.status.padEnd(9)} ${responses.count(r.id)}/${r.total}  ${r.modelId}  ${r.deviceLabel}  ${r.createdAt}${label}${origin}`);
      }
      return 0;
    }
    const runId = positionals[0] ?? '';
    const stored = runs.get(runId);
    if (!stored) {
      console.error(`horizon export: run ${runId} not found in ${dbFile} (see --list)`);
      return 1;
    }
    if (isLiveStatus(stored.status)) {
      const claim = claimLeftRunning(runs, dbFile);
      if ('busy' in claim) {
        console.error(`horizon export: run ${runId} is still ${stored.status}: export it once it has finished or been cancelled (${claim.busy})`);
        return 1;
      }
      claim.release();
    }
    const inputs = await loadEvalInputs(dataDir);
    const out = path.resolve(values.out ?? path.join(dataLayout.exportsDir(dataDir), `${runId}.zip`));
    const zip = await writeResultZip({ runs, responses, db, inputDataText: inputs.inputDataText, tools: inputs.tools }, runId, out);
    console.log(`wrote ${zip.path} (${zip.bytes} bytes, sha256 ${zip.sha256})`);
    if (zip.run.status !== 'completed') {
      console.log(`note: run ${runId} is ${zip.run.status}: the ZIP holds ${zip.run.responses} of its ${zip.run.total} prompts`);
    }
    return 0;
  } finally {
    db.close();
  }
}
