import path from 'node:path';
import { parseArgs } from 'node:util';

import { dataLayout, defaultDataDir } from '../../main/data-dir.js';
import { openDatabase } from '../../main/db/open-database.js';
import { ResponseRepo } from '../../main/db/response-repo.js';
import { RunRepo } from '../../main/db/run-repo.js';
import { writeResultZip } from '../../main/export/write-result-zip.js';
import { loadEvalInputs } from '../../main/jobs/eval-inputs.js';

export const summary = 'write the result ZIP of a stored run (or list the runs)';

const USAGE = `usage: horizon export RUN_ID [--out RESULT.zip] [--db FILE] [--data-dir DIR]
       horizon export --list [--db FILE] [--data-dir DIR]`;

export async function run(args: string[]): Promise<number> {
  let values, positionals;
  try {
    ({ values, positionals } = parseArgs({
      args,
      options: {
        out: { type: 'string' },
        db: { type: 'string' },
        'data-dir': { type: 'string' },
        list: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
      allowPositionals: true,
    }));
  } catch (e) {
    console.error(`horizon export: ${(e as Error).message}\n${USAGE}`);
    return 2;
  }
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  const dataDir = path.resolve(values['data-dir'] ?? defaultDataDir());
  const db = openDatabase(path.resolve(values.db ?? dataLayout.database(dataDir)));
  try {
    const runs = new RunRepo(db);
    const responses = new ResponseRepo(db);
    if (values.list) {
      for (const r of runs.list()) {
        console.log(`${r.id}  ${r.status.padEnd(9)} ${responses.count(r.id)}/${r.total}  ${r.modelId}  ${r.deviceLabel}  ${r.createdAt}`);
      }
      return 0;
    }
    const [runId] = positionals;
    if (!runId) {
      console.error(`horizon export: give a RUN_ID (see --list)\n${USAGE}`);
      return 2;
    }
    const inputs = await loadEvalInputs(dataDir);
    const out = path.resolve(values.out ?? path.join(dataLayout.exportsDir(dataDir), `${runId}.zip`));
    const zip = await writeResultZip({ runs, responses, inputDataText: inputs.inputDataText }, runId, out);
    console.log(`wrote ${zip.path} (${zip.bytes} bytes, sha256 ${zip.sha256})`);
    return 0;
  } finally {
    db.close();
  }
}
