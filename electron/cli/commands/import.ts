import { mkdirSync } from 'node:fs';
import path from 'node:path';

import { dataLayout, defaultDataDir } from '../../main/data-dir.js';
import { openDatabase } from '../../main/db/open-database.js';
import { ResponseRepo } from '../../main/db/response-repo.js';
import { RunRepo } from '../../main/db/run-repo.js';
import { PerfRepo } from '../../main/db/perf-repo.js';
import { ImportError, readZipToImport } from '../../main/export/import-fields.js';
import { importPerfZip } from '../../main/export/import-perf-zip.js';
import { importResultZip } from '../../main/export/import-result-zip.js';
import { isPerfZip } from '../../main/export/perf-zip.js';
import { backendLabel } from '../../main/jobs/backend-label.js';
import { accuraciesOf, formatAccuracies } from '../../main/jobs/run-accuracies.js';
import { dataDirOption, parseCommandArgs, usageError } from '../command-args.js';
import { loadVerifierInputs } from '../verifier-inputs.js';

export const summary = "add a result ZIP's run or a campaign ZIP's campaign (another machine's, a colleague's), once it verifies";

const USAGE = `usage: horizon import RESULT.zip|CAMPAIGN.zip [--db FILE] [--data-dir DIR] [--punkt DIR]
  The ZIP is verified as horizon verify does; one that does not verify, and a run or campaign stored already, are
  refused. A run keeps its id, times, status, model, device, figures and the INT4 check its ZIP carried (quality.json);
  it can be listed, compared (horizon compare), exported and deleted like a run made here, but not resumed: its model
  is on the machine that made it.
  A campaign keeps its id, times, status, device, settings and requests; the Performance page shows it.
  --db        SQLite file (default <data dir>/runmap.sqlite; created when there is none)
  --data-dir  data folder (default $HORIZON_DATA_DIR or the platform app-data folder)
  --punkt     Punkt English parameters for re-scoring (default as horizon verify)`;

export async function run(args: string[]): Promise<number> {
  const parsed = parseCommandArgs(
    'import',
    USAGE,
    args,
    { db: { type: 'string' }, 'data-dir': { type: 'string' }, punkt: { type: 'string' } },
    { positionals: true },
  );
  if (typeof parsed === 'number') return parsed;
  const { values, positionals } = parsed;
  const [file, ...extra] = positionals;
  if (!file || extra.length > 0) return usageError('import', USAGE, 'give exactly one RESULT.zip or CAMPAIGN.zip');
  const dataDir = dataDirOption(values, defaultDataDir);
  const dbFile = path.resolve(values.db ?? dataLayout.database(dataDir));
  const zip = path.resolve(file);
  const read = await readZipToImport(zip, new Date().toISOString());
  const campaign = isPerfZip(read.entries);
  // A campaign's figures need no scorer: a data folder without the eval assets can still hold one.
  const verifier = campaign ? null : await loadVerifierInputs(dataDir, values.punkt);
  mkdirSync(path.dirname(dbFile), { recursive: true });
  const db = openDatabase(dbFile);
  try {
    if (!verifier) {
      const c = await importPerfZip(zip, { perf: new PerfRepo(db), db, read });
      const n = c.requests.length;
      console.log(`imported campaign ${c.id} (${c.status}, ${n} request${n === 1 ? '' : 's'}, ${c.deviceLabel}) from ${file} into ${dbFile}`);
      return 0;
    }
    const runs = new RunRepo(db);
    const responses = new ResponseRepo(db);
    const imported = await importResultZip(zip, { runs, responses, db, tools: verifier.tools, verifyOptions: verifier.verifyOptions, read });
    const r = imported.run;
    console.log(`imported run ${r.id} (${r.status}, ${imported.responses} of ${r.total} prompts, ${backendLabel(r.backend, r.deviceLabel)}) from ${file} into ${dbFile}`);
    for (const u of imported.unchecked) console.log(`unchecked: ${u}`);
    const accuracies = accuraciesOf(responses.passCounts(r.id));
    console.log(accuracies ? formatAccuracies(accuracies) : 'no prompts scored');
    return 0;
  } catch (e) {
    if (!(e instanceof ImportError)) throw e;
    console.error(`horizon import: ${e.message}`);
    return 1;
  } finally {
    db.close();
  }
}
